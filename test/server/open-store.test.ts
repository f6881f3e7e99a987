/**
 * Opening the embedded store: a store that fails after it opened (a migration that cannot run, for example after a
 * downgrade or a hand-edited database) is closed again before the error reaches the caller, so nothing of it stays open
 * in this process and a second open in the same process finds the directory free.
 */
import { readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/server/db/db';
import { openStore } from '../../src/server/db/open-store';
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
