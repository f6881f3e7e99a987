/**
 * The webhook's live flows kept in memory on the embedded store (webhook/live-flows.ts): a write through the flows SQL
 * is seen by the next report at once, a read that overlapped a write is not kept, a trigger without flows is not kept,
 * a kept list lasts its TTL at most, and on PostgreSQL (other instances write flows too) every batch reads them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/server/db/db';
import { noteTableChanged } from '../../src/server/db/table-changes';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { transitionFlow } from '../../src/server/api/flows/sql';
import { LIVE_FLOWS_TTL_MS, liveFlowsOf } from '../../src/server/webhook/live-flows';
import { siteTriggerKey } from '../../src/server/webhook';
import { DATABASE_KINDS } from './support/databases';
import { insertApiFlow } from './support/fixtures';

describe.each(DATABASE_KINDS)('live flows of a report batch on $name', (kind) => {
  let db: Database;
  let site: SiteRow;
  let clock = 1_000_000;
  const now = () => clock;
  beforeAll(async () => {
    db = await kind.open();
    site = await insertSite(db, (await insertAccount(db, 'flows')).id);
  });
  afterAll(() => db.close());

  const namesOf = async (triggerKey: string) => {
    const found = await liveFlowsOf(db, [{ siteId: site.id, triggerKey, kind: 'saas_signup' }], now);
    return (found.get(siteTriggerKey(site.id, triggerKey, 'saas_signup')) ?? []).map((flow) => flow.name);
  };
  /** A change the flows SQL does not see (as a test fixture or an operator's psql would make it). */
  const renameBehindItsBack = (name: string, to: string) => db.query('update flows set name = $2 where site_id = $1 and name = $3', [site.id, to, name]);

  it('sees a flow published or unpublished through the flows SQL at the next read', async () => {
    const id = await insertApiFlow(db, site, { triggerKey: 'published', name: 'p1', status: 'draft' });
    expect(await namesOf('published')).toEqual([]);
    await transitionFlow(db, site.account_id, id, 'draft', 'live');
    expect(await namesOf('published')).toEqual(['p1']);
    await transitionFlow(db, site.account_id, id, 'live', 'draft');
    expect(await namesOf('published')).toEqual([]);
  });

  it('keeps a list on the embedded store only, for its TTL at most', async () => {
    await insertApiFlow(db, site, { triggerKey: 'kept', name: 'k1' });
    expect(await namesOf('kept')).toEqual(['k1']);
    await renameBehindItsBack('k1', 'k1-renamed');
    // The embedded store serves the kept list; PostgreSQL reads every time.
    expect(await namesOf('kept')).toEqual(kind.name === 'pglite' ? ['k1'] : ['k1-renamed']);
    clock += LIVE_FLOWS_TTL_MS;
    expect(await namesOf('kept')).toEqual(['k1-renamed']);
  });

  it('does not keep a trigger without flows: a flow made for it is found at once', async () => {
    expect(await namesOf('later')).toEqual([]);
    await insertApiFlow(db, site, { triggerKey: 'later', name: 'l1' });
    expect(await namesOf('later')).toEqual(['l1']);
  });

  it('does not keep a list read while a write to flows was under way', async () => {
    await insertApiFlow(db, site, { triggerKey: 'overlap', name: 'o1' });
    const reading = namesOf('overlap');
    noteTableChanged('flows'); // a write began while the read was under way
    expect(await reading).toEqual(['o1']);
    await renameBehindItsBack('o1', 'o1-renamed');
    expect(await namesOf('overlap')).toEqual(['o1-renamed']);
  });
});
