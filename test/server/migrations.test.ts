import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { MIGRATIONS, migrate } from '../../src/server/db/migrations';
import { openDatabase, type Database } from '../../src/server/db/db';

// The one place the migrations run on an empty database: every other test clones the migrated image
// (test/support/pglite.ts), so this file is what proves the migrations themselves. One empty database per kind (on
// PGlite a clone of the cluster as initdb left it), migrated once, and the tests below read what that one run made.
describe.each(DATABASE_KINDS)('migrations on $name', (kind) => {
  let db: Database;
  let applied: number[];
  beforeAll(async () => {
    db = await kind.openUnmigrated();
    applied = await migrate(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('applies every migration once and is a no-op the second time', async () => {
    expect(applied).toEqual(MIGRATIONS.map((m) => m.version));
    const versions = await db.query<{ version: number }>('select version from schema_migrations order by version');
    expect(versions.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await migrate(db)).toEqual([]);
  });

  it('creates the tables the store relies on', async () => {
    const rows = await db.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = current_schema() order by table_name`,
    );
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['accounts', 'api_keys', 'sites', 'handoffs', 'flows', 'snapshots', 'reports', 'events', 'event_actions', 'outbox']),
    );
  });

  it('checks every table\'s site against sites except the snapshots the collector writes (migration 22)', async () => {
    const rows = await db.query<{ table_name: string }>(
      `select distinct c.conrelid::regclass::text as table_name from pg_constraint c
       where c.contype = 'f' and c.confrelid = 'sites'::regclass and c.connamespace = current_schema()::regnamespace
       order by 1`,
    );
    const checked = rows.map((r) => r.table_name);
    expect(checked).not.toContain('snapshots');
    expect(checked).toEqual(expect.arrayContaining(['flows', 'reports', 'events', 'form_submissions']));
  });

  it.runIf(kind.name === 'pglite')('made the image every other test clones: a clone holds exactly this schema', async () => {
    const clone = await kind.open();
    try {
      const columns = (on: Database) =>
        on.query(
          `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
           where table_schema = current_schema() order by table_name, column_name`,
        );
      const indexes = (on: Database) =>
        on.query(`select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`);
      const versions = (on: Database) => on.query('select version, name from schema_migrations order by version');
      expect(await columns(clone)).toEqual(await columns(db));
      expect(await indexes(clone)).toEqual(await indexes(db));
      expect(await versions(clone)).toEqual(await versions(db));
      expect(await migrate(clone)).toEqual([]);
    } finally {
      await clone.close();
    }
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('migrations on a shared PostgreSQL', () => {
  it('lets several services start at once on an empty database: each version is applied exactly once', async () => {
    const url = process.env.TEST_DATABASE_URL!;
    const schema = `race_${Date.now().toString(36)}`;
    const admin = await openDatabase({ databaseUrl: url });
    await admin.exec(`create schema ${schema}`);
    const options = `options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const starters = await Promise.all([0, 1, 2, 3].map(() => openDatabase({ databaseUrl: `${url}?${options}` })));
    try {
      const applied = await Promise.all(starters.map((db) => migrate(db)));
      expect(applied.flat().sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
      const rows = await starters[0]!.query<{ n: number }>('select count(*)::int as n from schema_migrations');
      expect(rows[0]!.n).toBe(MIGRATIONS.length);
    } finally {
      await Promise.all(starters.map((db) => db.close()));
      await admin.exec(`drop schema ${schema} cascade`);
      await admin.close();
    }
  });
});

describe.each(DATABASE_KINDS)('migrations 27 and 33 (rows already stored numbered) on $name', (kind) => {
  let db: Database;
  beforeAll(async () => {
    db = await kind.openUnmigrated();
    // The store as version 26 left it: every earlier migration applied and recorded.
    await db.exec('create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())');
    for (const migration of MIGRATIONS.filter((m) => m.version < 27)) {
      await db.exec(migration.sql);
      await db.query('insert into schema_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
    }
    await db.exec(`insert into accounts (id, name) values ('acct_a', 'A'), ('acct_b', 'B')`);
    // Inserted in another order than created_at (and reconnected: an update moves a row in the table).
    await db.exec(`insert into destinations (id, account_id, type, created_at) values
      ('dst_3', 'acct_a', 'meta', '2026-03-01T00:00:00Z'),
      ('dst_1', 'acct_a', 'google-ads', '2026-01-01T00:00:00Z'),
      ('dst_b', 'acct_b', 'meta', '2026-02-01T00:00:00Z'),
      ('dst_2b', 'acct_a', 'linkedin', '2026-02-01T00:00:00Z'),
      ('dst_2a', 'acct_a', 'reddit', '2026-02-01T00:00:00Z')`);
    await db.exec(`update destinations set settings = '{"x": 1}'::jsonb where id = 'dst_1'`);
    // Adjustments of one conversion: adj_2 began first (its created_at) but committed second, its result numbered
    // after adj_3's; adj_1 came when the report had no action yet (no result).
    await db.exec(`insert into sites (id, account_id, name, site_key, domain) values ('site_a', 'acct_a', 'A', 'sitekeya', 'https://a.example')`);
    await db.exec(`insert into reports (id, site_id, customer_event_id, trigger_key) values ('rpt_a', 'site_a', 'order_a', 'signup')`);
    await db.exec(`insert into events (id, account_id, site_id, site_key, report_id, trigger, occurred_at, sort_at, status) values
      ('evt_a', 'acct_a', 'site_a', 'sitekeya', 'rpt_a', 'api', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z', 'completed')`);
    await db.exec(`insert into event_actions (id, event_id, destination, position, status) values ('act_a', 'evt_a', 'google-ads', 0, 'delivered')`);
    await db.exec(`insert into adjustments (id, site_id, adjustment_id, report_id, type, value, currency, occurred_at, events, created_at) values
      ('adj_3', 'site_a', 'c', 'rpt_a', 'restate', 30, 'EUR', '2026-11-02T00:00:00Z', 1, '2026-11-03T00:00:02Z'),
      ('adj_2', 'site_a', 'b', 'rpt_a', 'restate', 20, 'EUR', '2026-11-02T00:00:00Z', 1, '2026-11-03T00:00:01Z'),
      ('adj_1', 'site_a', 'a', 'rpt_a', 'restate', 10, 'EUR', '2026-11-02T00:00:00Z', 0, '2026-11-03T00:00:03Z')`);
    await db.exec(`insert into adjustment_results (id, adjustment_id, event_action_id, destination, status) values ('adr_3', 'adj_3', 'act_a', 'google-ads', 'adjusted')`);
    await db.exec(`insert into adjustment_results (id, adjustment_id, event_action_id, destination, status) values ('adr_2', 'adj_2', 'act_a', 'google-ads', 'adjusted')`);
    expect(await migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version >= 27).map((m) => m.version));
  });
  afterAll(() => db.close());

  it('numbers the connections already stored in the order the list showed them, and new ones after them', async () => {
    const order = async () => (await db.query<{ id: string }>(`select id from destinations where account_id = 'acct_a' order by seq`)).map((r) => r.id);
    expect(await order()).toEqual(['dst_1', 'dst_2a', 'dst_2b', 'dst_3']);
    await db.exec(`insert into destinations (id, account_id, type, created_at) values ('dst_new', 'acct_a', 'tiktok', '2020-01-01T00:00:00Z')`);
    expect(await order()).toEqual(['dst_1', 'dst_2a', 'dst_2b', 'dst_3', 'dst_new']);
  });

  it('numbers the adjustments already stored in the order their results were sent in, and new ones after them', async () => {
    const order = async () => (await db.query<{ id: string }>(`select id from adjustments where report_id = 'rpt_a' order by seq`)).map((r) => r.id);
    expect(await order()).toEqual(['adj_1', 'adj_3', 'adj_2']);
    await db.exec(`insert into adjustments (id, site_id, adjustment_id, report_id, type, value, currency, occurred_at, events, created_at) values
      ('adj_new', 'site_a', 'd', 'rpt_a', 'restate', 40, 'EUR', '2026-11-02T00:00:00Z', 1, '2020-01-01T00:00:00Z')`);
    expect(await order()).toEqual(['adj_1', 'adj_3', 'adj_2', 'adj_new']);
  });
});
