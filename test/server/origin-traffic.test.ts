/** The install check's record of page origins: counted per origin and kind, bounded per site, refusals apart. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { addOriginTraffic, listOriginTraffic, ORIGIN_TRAFFIC_ROWS_PER_SITE } from '../../src/server/collector/origin-traffic-sql';
import { OriginTraffic } from '../../src/server/collector/origin-traffic';
import { installCheckOf, loaderSeen } from '../../src/server/dashboard/install-check';

describe.each(DATABASE_KINDS)('origin traffic on $name', (kind) => {
  let db: Database;
  let siteId: string;
  beforeAll(async () => {
    db = await kind.open();
    siteId = (await insertSite(db, (await insertAccount(db, 'origins')).id, { domain: 'https://www.example.com' })).id;
  });
  afterAll(() => db.close());

  const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 9, minute));

  it('adds counts to the same origin and kind', async () => {
    const row = { site_id: siteId, origin: 'https://www.example.com', kind: 'config' as const, reason: '' as const, domain: 'https://www.example.com', count: 2, last_seen_at: at(0) };
    await addOriginTraffic(db, [row]);
    await addOriginTraffic(db, [{ ...row, count: 3, last_seen_at: at(1) }]);
    const [stored] = (await listOriginTraffic(db, siteId)).filter((r) => r.kind === 'config');
    expect(stored).toMatchObject({ origin: 'https://www.example.com', count: 5, last_seen_at: at(1) });
  });

  it('keeps the served origins when anyone floods it with refused ones, each kept to its own bound', async () => {
    const refused = Array.from({ length: ORIGIN_TRAFFIC_ROWS_PER_SITE + 10 }, (_, i) => ({
      site_id: siteId, origin: `https://fake-${i}.example.net`, kind: 'refused' as const, reason: 'not_covered' as const,
      domain: 'https://www.example.com', count: 1, last_seen_at: at(10 + i),
    }));
    await addOriginTraffic(db, refused);
    const rows = await listOriginTraffic(db, siteId);
    expect(rows.filter((r) => r.kind === 'config')).toHaveLength(1);
    expect(rows.filter((r) => r.kind === 'refused')).toHaveLength(ORIGIN_TRAFFIC_ROWS_PER_SITE);
    expect(rows.some((r) => r.origin === 'https://fake-0.example.net'), 'the oldest refusals go first').toBe(false);
  });

  it('keeps the served origins when anyone floods the config endpoint with origins the site does not cover', async () => {
    // A config request is answered to any page (the loader decides), so anyone can send one with any Origin header:
    // those of origins the domain does not cover are refusals too, and must not push out the pages that were served.
    const site = await insertSite(db, (await insertAccount(db, 'flooded')).id, { domain: 'https://www.example.com' });
    const traffic = new OriginTraffic(db, { onError: (error) => { throw error; } });
    traffic.config(site, 'https://www.example.com');
    traffic.served(site, 'https://www.example.com', 'snapshot');
    await traffic.flush();
    for (let i = 0; i < ORIGIN_TRAFFIC_ROWS_PER_SITE + 10; i++) traffic.config(site, `https://fake-${i}.example.net`);
    await traffic.flush();
    const check = installCheckOf(await listOriginTraffic(db, site.id), site.domain);
    expect(check.origins.find((o) => o.origin === 'https://www.example.com')).toMatchObject({ covered: true, configCount: 1, snapshotCount: 1 });
    expect(loaderSeen(check)).toBe(true);
    // The flood is still shown, as refusals and as origins not covered, each within its own bound.
    expect(check.refusals).toHaveLength(ORIGIN_TRAFFIC_ROWS_PER_SITE);
    expect(check.origins.filter((o) => !o.covered)).toHaveLength(ORIGIN_TRAFFIC_ROWS_PER_SITE);
  });

  it('counts the config requests of an origin once, whether the domain covered it then or not', async () => {
    const site = await insertSite(db, (await insertAccount(db, 'domain moved')).id, { domain: 'https://www.example.com' });
    const traffic = new OriginTraffic(db);
    traffic.config(site, 'https://app.example.com');
    traffic.config(site, 'https://app.example.com');
    await traffic.flush();
    const widened = { ...site, domain: 'https://example.com' };
    traffic.config(widened, 'https://app.example.com');
    await traffic.flush();
    const check = installCheckOf(await listOriginTraffic(db, site.id), widened.domain);
    expect(check.origins).toHaveLength(1);
    expect(check.origins[0]).toMatchObject({ origin: 'https://app.example.com', covered: true, configCount: 3 });
  });
});
