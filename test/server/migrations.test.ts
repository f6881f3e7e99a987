import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { MIGRATIONS, migrate } from '../../src/server/db/migrations';
import { openDatabase, type Database } from '../../src/server/db/db';

// The one place the migrations run on an empty database: every other test clones the migrated image
// (test/support/pglite.ts), so this file is what proves the migrations themselves. One empty database per kind,
// migrated once: a PGlite initdb is the slow part, and the tests below read what that one run made.
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
