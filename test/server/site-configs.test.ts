/**
 * The loader's config by site key kept in memory (collector/site-configs.ts): reused for SITE_CONFIG_TTL_MS, read again
 * at once after a write made through the sites or flows SQL, within the TTL after a write made some other way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/server/db/db';
import { noteTableChanged } from '../../src/server/db/table-changes';
import { insertSite, updateSite } from '../../src/server/api/sites/sql';
import { MAX_KEPT_SITE_CONFIGS, SITE_CONFIG_TTL_MS, SiteConfigs } from '../../src/server/collector/site-configs';
import { createTestService, type TestService } from './support/harness';
import { insertFormFlow } from './support/fixtures';

describe('SiteConfigs', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService();
  });
  afterAll(() => svc.close());

  /** A SiteConfigs over the test store that counts its statements, on a hand-moved clock. */
  function counted() {
    let statements = 0;
    let clock = 1_000_000;
    const db: Queryable = {
      query: (sql, params) => {
        statements++;
        return svc.db.query(sql, params);
      },
    };
    const configs = new SiteConfigs(db, () => clock);
    return { configs, statements: () => statements, advance: (ms: number) => (clock += ms) };
  }

  it('reuses a config for its TTL without a statement, then reads it again', async () => {
    const site = await insertSite(svc.db, svc.accountId, { domain: 'https://kept.example' });
    const { configs, statements, advance } = counted();
    const first = await configs.get(site.site_key);
    expect(first?.site.id).toBe(site.id);
    expect(first?.config).toMatchObject({ site_key: site.site_key, domain: 'https://kept.example', forms: [] });
    const read = statements();
    expect(read).toBeGreaterThan(0);
    advance(SITE_CONFIG_TTL_MS - 1);
    expect(await configs.get(site.site_key)).toEqual(first);
    expect(statements()).toBe(read);
    advance(1);
    await configs.get(site.site_key);
    expect(statements()).toBe(2 * read);
  });

  it("has a site's change made through the sites or flows SQL in the next answer, within the TTL", async () => {
    const site = await insertSite(svc.db, svc.accountId, { domain: 'https://before.example' });
    const { configs } = counted();
    expect((await configs.get(site.site_key))?.config.domain).toBe('https://before.example');
    await updateSite(svc.db, svc.accountId, site.id, { domain: 'https://after.example' });
    expect((await configs.get(site.site_key))?.config.domain).toBe('https://after.example');
    await insertFormFlow(svc.db, site, 'hubspot');
    expect((await configs.get(site.site_key))?.config.forms).toEqual([{ integration: 'hubspot', page_filter: 'all' }]);
  });

  it('sees a change made some other way (another instance) once the TTL has passed', async () => {
    const site = await insertSite(svc.db, svc.accountId, { domain: 'https://one.example' });
    const { configs, advance } = counted();
    await configs.get(site.site_key);
    await svc.db.query('update sites set domain = $2 where id = $1', [site.id, 'https://two.example']);
    expect((await configs.get(site.site_key))?.config.domain).toBe('https://one.example');
    advance(SITE_CONFIG_TTL_MS);
    expect((await configs.get(site.site_key))?.config.domain).toBe('https://two.example');
  });

  it('keeps an unknown key for its TTL, and finds a site created meanwhile by its own new key', async () => {
    const { configs, statements } = counted();
    expect(await configs.get('no_such_key')).toBeNull();
    const read = statements();
    expect(await configs.get('no_such_key')).toBeNull();
    expect(statements()).toBe(read);
    const site = await insertSite(svc.db, svc.accountId);
    expect((await configs.get(site.site_key))?.site.id).toBe(site.id);
  });

  it('shares one read between concurrent misses of a key', async () => {
    const { configs, statements } = counted();
    const answers = await Promise.all([configs.get(svc.site.site_key), configs.get(svc.site.site_key), configs.get(svc.site.site_key)]);
    expect(new Set(answers.map((a) => a?.site.id))).toEqual(new Set([svc.site.id]));
    const once = statements();
    const { configs: single, statements: singleStatements } = counted();
    await single.get(svc.site.site_key);
    expect(once).toBe(singleStatements());
  });

  it('never keeps a read that overlapped a write, and a request after a write never joins a read begun before it', async () => {
    const site = await insertSite(svc.db, svc.accountId, { domain: 'https://overlap.example' });
    let writeDuringRead = true;
    let statements = 0;
    const db: Queryable = {
      query: async <T,>(sql: string, params?: readonly unknown[]) => {
        statements++;
        const rows = await svc.db.query<T>(sql, params);
        if (writeDuringRead) {
          writeDuringRead = false;
          noteTableChanged('sites'); // another write of this process, begun while the config was read
        }
        return rows;
      },
    };
    const configs = new SiteConfigs(db, () => 0);
    await configs.get(site.site_key);
    const afterFirst = statements;
    await configs.get(site.site_key); // not kept: read again
    expect(statements).toBe(2 * afterFirst);
    await configs.get(site.site_key); // that one was kept
    expect(statements).toBe(2 * afterFirst);
  });

  it('starts over past its bound, so made-up keys cannot fill memory', async () => {
    const { configs, statements } = counted();
    await configs.get(svc.site.site_key);
    const one = statements();
    for (let i = 0; i < MAX_KEPT_SITE_CONFIGS; i++) await configs.get(`made_up_${i}`);
    const before = statements();
    await configs.get(svc.site.site_key); // forgotten when the bound was reached: read again
    expect(statements()).toBe(before + one);
  }, 60_000);
});
