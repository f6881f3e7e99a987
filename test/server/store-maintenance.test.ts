/**
 * The embedded store's maintenance (src/server/db/maintenance.ts), what a PostgreSQL server's autovacuum does: the
 * queues vacuumed, every table analyzed, nothing run on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedPglite } from '../support/pglite';
import type { Database } from '../../src/server/db/db';
import { QUEUE_TABLES, maintainEmbeddedStore, startStoreMaintenance } from '../../src/server/db/maintenance';
import { createDeliveryFixture, insertReportedEvent } from './delivery/fixtures';

describe('maintenance of the embedded store', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openMigratedPglite();
    const fx = await createDeliveryFixture(db);
    for (let i = 0; i < 40; i++) await insertReportedEvent(db, fx);
    await db.query('delete from outbox'); // delivered
  });
  afterAll(() => db.close());

  const stats = (table: string) =>
    db.query<{ reltuples: number }>('select reltuples::float8 as reltuples from pg_class where relname = $1', [table]).then((rows) => rows[0]!);
  it('analyzes every table, so a statement planned on an empty store is planned again for the rows it has now', async () => {
    expect((await stats('events')).reltuples).toBe(-1); // never analyzed: the planner knows nothing of its rows
    await maintainEmbeddedStore(db);
    expect((await stats('events')).reltuples).toBe(40);
    expect((await stats('event_actions')).reltuples).toBe(40);
    expect((await stats('reports')).reltuples).toBe(40);
    for (const queue of QUEUE_TABLES) expect((await stats(queue)).reltuples).toBe(0);
  });

  it('vacuums the queues: the pages of delivered outbox rows are given back', async () => {
    const pages = async () => (await db.query<{ pages: number }>("select (pg_relation_size('outbox') / 8192)::int as pages"))[0]!.pages;
    const fx = await createDeliveryFixture(db);
    for (let i = 0; i < 200; i++) await insertReportedEvent(db, fx);
    await db.query('delete from outbox');
    expect(await pages()).toBeGreaterThan(0); // deleted rows keep their pages until a vacuum
    await maintainEmbeddedStore(db);
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
