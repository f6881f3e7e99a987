import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { insertEvent, type NewEvent } from '../../src/server/fanout/sql';

describe.each(DATABASE_KINDS)('event store on $name', (kind) => {
  let db: Database;
  let base: Omit<NewEvent, 'occurredAt'>;
  beforeAll(async () => {
    db = await kind.open();
    const account = await insertAccount(db, 'a');
    const site = await insertSite(db, account.id);
    base = {
      accountId: account.id, siteId: site.id, siteKey: site.site_key, flowId: null, flowName: null, reportId: null,
      trigger: 'api', matchQuality: 'high', email: null, clickIds: { gclid: 'x' }, data: {},
      actions: [{ destination: 'google-ads', conversionId: '123' }],
    };
  });
  afterAll(() => db.close());

  it('gives events that share an occurred_at distinct sort keys within that millisecond, even when inserted concurrently', async () => {
    const at = new Date('2026-11-21T09:30:00.123Z');
    await Promise.all(Array.from({ length: 25 }, () => db.transaction((tx) => insertEvent(tx, { ...base, occurredAt: at }))));
    const rows = await db.query<{ sort_at: Date; occurred_at: Date }>('select sort_at, occurred_at from events');
    expect(new Set(rows.map((r) => r.sort_at.toISOString())).size).toBe(1); // same millisecond when read as Date
    const distinct = await db.query<{ n: number }>('select count(distinct sort_at)::int as n from events');
    expect(distinct[0]!.n).toBe(25);
    expect(rows.every((r) => r.occurred_at.getTime() === at.getTime())).toBe(true);
  });

  it('queues one outbox row per action', async () => {
    const { actionIds } = await db.transaction((tx) => insertEvent(tx, { ...base, occurredAt: new Date() }));
    const rows = await db.query('select 1 from outbox where event_action_id = $1', [actionIds[0]]);
    expect(rows).toHaveLength(1);
  });
});
