import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { MIGRATIONS, migrate } from '../../src/server/store/migrations';
import type { Database } from '../../src/server/store/db';

describe.each(DATABASE_KINDS)('migrations on $name', (kind) => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it('applies every migration once and is a no-op the second time', async () => {
    db = await kind.open();
    const versions = await db.query<{ version: number }>('select version from schema_migrations order by version');
    expect(versions.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await migrate(db)).toEqual([]);
  });

  it('creates the tables the store relies on', async () => {
    db = await kind.open();
    const rows = await db.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = current_schema() order by table_name`,
    );
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['accounts', 'api_keys', 'sites', 'handoffs', 'flows', 'snapshots', 'reports', 'events', 'event_actions', 'outbox']),
    );
  });
});
