/**
 * The embedded store's maintenance (src/server/db/maintenance.ts), what a PostgreSQL server's autovacuum does: a table
 * analyzed once it has grown (never while it is nearly empty), the queues vacuumed, nothing run on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedPglite } from '../support/pglite';
import type { Database } from '../../src/server/db/db';
import { maintainEmbeddedStore, startStoreMaintenance, tablesToAnalyze } from '../../src/server/db/maintenance';
import { createDeliveryFixture, insertReportedEvent, type DeliveryFixture } from './delivery/fixtures';

describe('maintenance of the embedded store', () => {
  let db: Database;
  let fx: DeliveryFixture;
  beforeAll(async () => {
    db = await openMigratedPglite();
    fx = await createDeliveryFixture(db);
  });
  afterAll(() => db.close());

  const reltuples = async (table: string) =>
    (await db.query<{ n: number }>('select reltuples::float8 as n from pg_class where relname = $1', [table]))[0]!.n;
  const report = async (count: number) => {
    for (let i = 0; i < count; i++) await insertReportedEvent(db, fx);
  };

  it('leaves a new, nearly empty store unanalyzed: statistics taken now would tell the planner the tables are empty', async () => {
    await report(5);
    expect(await maintainEmbeddedStore(db, { vacuumQueues: false })).toEqual({ analyzed: [] });
    expect(await reltuples('events')).toBe(-1);
  });

  it('analyzes a table once it has grown, and again only when it has grown by half again', async () => {
    await report(295);
    const { analyzed } = await maintainEmbeddedStore(db, { vacuumQueues: false });
    expect(analyzed).toContain('events'); // the first table past ANALYZE_MIN_PAGES here
    expect(await reltuples('events')).toBe(300);
    expect(await tablesToAnalyze(db)).toEqual([]);
    await report(100);
    expect(await tablesToAnalyze(db)).not.toContain('events');
    await report(200);
    expect(await tablesToAnalyze(db)).toContain('events');
  });

  it('vacuums the queues: the pages of delivered outbox rows are given back', async () => {
    const pages = async () => (await db.query<{ pages: number }>("select (pg_relation_size('outbox') / 8192)::int as pages"))[0]!.pages;
    await db.query('delete from outbox'); // delivered
    expect(await pages()).toBeGreaterThan(0); // deleted rows keep their pages until a vacuum
    await maintainEmbeddedStore(db, { vacuumQueues: true });
    expect(await pages()).toBe(0);
  });

  it('runs nothing on PostgreSQL, whose autovacuum does this', async () => {
    const untouched = {
      kind: 'postgres',
      exec: () => Promise.reject(new Error('must not run')),
      query: () => Promise.reject(new Error('must not run')),
    } as unknown as Database;
    const errors: unknown[] = [];
    const maintenance = startStoreMaintenance({ db: untouched, log: { error: (obj) => errors.push(obj) } });
    await maintenance.stop();
    expect(errors).toEqual([]);
  });
});
