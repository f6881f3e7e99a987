/**
 * Opening the store. The embedded store that fails after it opened (a migration that cannot run, for example in a
 * hand-edited database) is closed again before the error reaches the caller, so nothing of it stays open in this
 * process and a second open in the same process finds the directory free. A store last used by a newer version (it
 * records migrations this one does not have) opens, and the service says so.
 */
import { readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/server/db/db';
import { openStore, upgradeOf } from '../../src/server/db/open-store';
import { MIGRATIONS, migrate, migrationsUnknownHere } from '../../src/server/db/migrations';
import { loadSettings } from '../../src/server/settings';
import { startService } from '../../src/server/service';
import { DATABASE_KINDS } from './support/databases';
import { cnv } from './support/cli-harness';
import { lockDataDir } from '../../src/server/db/data-dir-lock';
import { seededDataDir } from '../support/pglite';

const TIMEOUT = 120_000;
const BROKEN_MIGRATION = 'snapshots: visitor user agent%';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The files of `dir` this process holds open (Linux: /proc/self/fd). */
function openFilesUnder(dir: string): string[] {
  const root = realpathSync(dir);
  const open: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(join('/proc/self/fd', fd));
      if (target.startsWith(`${root}/`)) open.push(target);
    } catch {
      // closed while listing (the listing's own descriptor)
    }
  }
  return open;
}

/** A migrated store whose record of one migration is gone, so the next open runs it again and fails (its column exists). */
async function storeWithAFailingMigration(): Promise<{ dataDir: string; record: { version: number; name: string } }> {
  const dataDir = await seededDataDir('cnv-open-store-');
  dirs.push(dataDir);
  const db = await openDatabase({ dataDir });
  const removed = await db.query<{ version: number; name: string }>(
    'delete from schema_migrations where name like $1 returning version, name',
    [BROKEN_MIGRATION],
  );
  await db.close();
  expect(removed).toHaveLength(1);
  return { dataDir, record: removed[0]! };
}

describe.each(['main', 'worker'] as const)('openStore with PGlite on the %s thread', (pgliteThread) => {
  it('closes the store it opened when the migrations fail, and frees the directory', { timeout: TIMEOUT }, async () => {
    const { dataDir, record } = await storeWithAFailingMigration();
    expect(openFilesUnder(dataDir)).toEqual([]);

    await expect(openStore({ dataDir, databaseUrl: undefined }, 'the test', { pgliteThread })).rejects.toThrow(/user_agent/);

    // Nothing of the failed open is left: no file of the store open, the lock free for the next process.
    expect(openFilesUnder(dataDir)).toEqual([]);
    lockDataDir(dataDir, 'the check')();

    // The same process opens it again once the cause is gone, and finds the store as it was.
    const db = await openDatabase({ dataDir });
    await db.query('insert into schema_migrations (version, name) values ($1, $2)', [record.version, record.name]);
    await db.close();
    const store = await openStore({ dataDir, databaseUrl: undefined }, 'the test', { pgliteThread });
    try {
      const [row] = await store.db.query<{ n: number }>('select count(*)::int as n from schema_migrations where version = $1', [record.version]);
      expect(row!.n).toBe(1);
    } finally {
      await store.close();
    }
    expect(openFilesUnder(dataDir)).toEqual([]);
  });
});

/** A version no migration of this build has, as a newer build would record it. */
const NEWER = Math.max(...MIGRATIONS.map((migration) => migration.version)) + 1;

describe.each(DATABASE_KINDS)('migrations a newer version recorded ($name)', (kind) => {
  it('are named, in order, and the next start migrates nothing and keeps them', { timeout: TIMEOUT }, async () => {
    const db = await kind.open();
    try {
      expect(await migrationsUnknownHere(db)).toEqual([]);
      await db.query('insert into schema_migrations (version, name) values ($1, $2), ($3, $4)', [
        NEWER + 1, 'a later one', NEWER, 'from a newer cnv',
      ]);
      expect(await migrationsUnknownHere(db)).toEqual([NEWER, NEWER + 1]);
      expect(await migrate(db)).toEqual([]);
      expect(await migrationsUnknownHere(db)).toEqual([NEWER, NEWER + 1]);
    } finally {
      await db.close();
    }
  });
});

describe('a store last used by a newer version', () => {
  it('opens, and the service and the command line warn naming the migrations it does not have', { timeout: TIMEOUT }, async () => {
    const dataDir = await seededDataDir('cnv-newer-store-');
    dirs.push(dataDir);
    let store = await openStore({ dataDir, databaseUrl: undefined }, 'the test');
    expect(store.newerMigrations).toBeUndefined();
    await store.db.query('insert into schema_migrations (version, name) values ($1, $2)', [NEWER, 'from a newer cnv']);
    await store.close();
    store = await openStore({ dataDir, databaseUrl: undefined }, 'the test');
    expect(store.newerMigrations).toEqual([NEWER]);
    await store.close();

    // The command line says it too, on stderr, and does what it was asked.
    const listed = await cnv(['accounts', 'list'], { env: { CNV_DATA_DIR: dataDir } });
    expect(listed.code).toBe(0);
    expect(listed.err).toBe(
      `cnv: warning: the store was last used by a newer version of cnv (it holds migrations ${NEWER}, which this version does not have); this version runs on it, as migrations only add.\n`,
    );

    const lines: string[] = [];
    const running = await startService(
      loadSettings({ HOST: '127.0.0.1', PORT: '0', CNV_DATA_DIR: dataDir, CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example' }),
      { logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } as never },
    );
    try {
      const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string; migrations?: number[] }).filter((l) => l.level === 40);
      expect(warnings).toEqual([expect.objectContaining({ migrations: [NEWER], msg: expect.stringContaining('newer version of cnv') })]);
    } finally {
      await running.close();
    }
  });
});

describe('what an open says it applied', () => {
  it('names the migrations of an upgrade, and nothing for a new store or an unchanged one', () => {
    const all = MIGRATIONS.map((m) => m.version);
    expect(upgradeOf(all)).toEqual({});
    expect(upgradeOf([])).toEqual({});
    expect(upgradeOf(all.slice(-2))).toEqual({ upgradedWith: all.slice(-2) });
  });
});
