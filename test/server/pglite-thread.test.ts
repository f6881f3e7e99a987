/**
 * The embedded store through its own node-postgres connection (a statement's messages sent together), with PGlite in
 * this thread and on a worker thread: the same answers, errors that leave the connection usable, transactions that
 * roll back, prepared statements, a worker that reopens what it wrote, and commits written through to the disk.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import fs, { existsSync, fsyncSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../src/server/db/db';
import { emptyImage, seededDataDir } from '../support/pglite';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function open(thread: 'main' | 'worker'): Promise<{ db: Database; dataDir: string }> {
  const dataDir = await seededDataDir('cnv-pglite-thread-');
  dirs.push(dataDir);
  return { db: await openDatabase({ dataDir, pgliteThread: thread }), dataDir };
}

describe.each(['main', 'worker'] as const)('PGlite in the %s thread', (thread) => {
  it('answers statements, keeps a failed one to itself, rolls a failed transaction back, and keeps what it committed', async () => {
    const { db, dataDir } = await open(thread);
    try {
      await db.exec('create table t (id int primary key, note text)');
      // Run twice: the second run of a text is prepared under a name.
      for (const id of [1, 2]) {
        expect(await db.query('insert into t values ($1, $2) returning id, note', [id, `n${id}`])).toEqual([{ id, note: `n${id}` }]);
      }
      await expect(db.query('insert into t values ($1, $2)', [1, 'again'])).rejects.toMatchObject({ code: '23505' });
      await expect(db.query('select * from no_such_table')).rejects.toMatchObject({ code: '42P01' });
      // A bad parameter fails in the client, before anything is sent; the connection stays usable.
      await expect(db.query('select $1::int as n', ['not a number'])).rejects.toThrow();
      expect(await db.query('select count(*)::int as n from t')).toEqual([{ n: 2 }]);

      await expect(
        db.transaction(async (tx) => {
          await tx.query('insert into t values ($1, $2)', [3, 'n3']);
          await tx.query('insert into t values ($1, $2)', [1, 'dup']);
        }),
      ).rejects.toMatchObject({ code: '23505' });
      const committed = await db.transaction(async (tx) => {
        await tx.query('insert into t values ($1, $2)', [4, 'n4']);
        return tx.query<{ id: number }>('select id from t order by id');
      });
      expect(committed.map((r) => r.id)).toEqual([1, 2, 4]);

      expect(await db.query('show shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
      // A commit is written through to the disk (see durableOptions): PGlite's own start parameters turn fsync off.
      expect(await db.query('show fsync')).toEqual([{ fsync: 'on' }]);
      expect(await db.query('show wal_sync_method')).toEqual([{ wal_sync_method: 'fsync' }]);
      expect(await db.query('show wal_init_zero')).toEqual([{ wal_init_zero: 'off' }]);
      // An answer larger than PGlite's output buffer comes in several chunks, joined in order.
      const [wide] = await db.query<{ s: string }>("select repeat('ab', 150000) || 'end' as s");
      expect(wide!.s).toHaveLength(300_003);
      expect(wide!.s.endsWith('babend')).toBe(true);
      const long = await db.query<{ g: number }>('select g from generate_series(1, 20000) g');
      expect(long.map((r) => r.g)).toEqual(Array.from({ length: 20000 }, (_, i) => i + 1));
      // Statements sent at once are answered each by its own result, in order.
      const many = await Promise.all(Array.from({ length: 50 }, (_, i) => db.query<{ n: number }>('select $1::int * 2 as n', [i])));
      expect(many.map((rows) => rows[0]!.n)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    } finally {
      await db.close();
    }
    const again = await openDatabase({ dataDir, pgliteThread: thread });
    try {
      expect(await again.query('select id, note from t order by id')).toEqual([
        { id: 1, note: 'n1' },
        { id: 2, note: 'n2' },
        { id: 4, note: 'n4' },
      ]);
    } finally {
      await again.close();
    }
  }, 120_000);
});

describe('a commit on the embedded store', () => {
  it('is answered only after its WAL segment was fsynced to the disk', async () => {
    const { db, dataDir } = await open('main');
    const synced: string[] = [];
    const fsync = vi.spyOn(fs, 'fsyncSync').mockImplementation(function (this: unknown, fd: number) {
      synced.push(readlinkSync(`/proc/self/fd/${fd}`));
      return fsyncSync.call(this, fd);
    });
    try {
      await db.exec('create table t (id int primary key)');
      synced.length = 0;
      await db.query('insert into t values ($1)', [1]);
      expect(synced.some((path) => path.startsWith(join(realpathSync(dataDir), 'pg_wal') + '/'))).toBe(true);
      // A read writes nothing, so it syncs nothing.
      synced.length = 0;
      await db.query('select * from t');
      expect(synced).toEqual([]);
    } finally {
      fsync.mockRestore();
      await db.close();
    }
  }, 60_000);

  it('starts a new WAL segment without writing it full of zeros first, and syncs a commit into it before answering', async () => {
    const { db, dataDir } = await open('main');
    const wal = join(realpathSync(dataDir), 'pg_wal');
    const segments = () => new Set(readdirSync(wal).filter((name) => /^[0-9A-F]{24}$/.test(name)));
    const synced: string[] = [];
    const fsync = vi.spyOn(fs, 'fsyncSync').mockImplementation(function (this: unknown, fd: number) {
      synced.push(readlinkSync(`/proc/self/fd/${fd}`));
      return fsyncSync.call(this, fd);
    });
    let created: string | undefined;
    try {
      await db.exec('create table t (id int primary key)');
      // Segments a checkpoint recycled are used first (renamed, already written); switch until a new one is made.
      for (let id = 1; id <= 20 && !created; id++) {
        const before = segments();
        await db.query('select pg_switch_wal()');
        synced.length = 0;
        await db.query('insert into t values ($1)', [id]);
        created = [...segments()].find((name) => !before.has(name));
        if (created) expect(synced).toContain(join(wal, created));
      }
      expect(created).toBeDefined();
      const { size, blocks } = statSync(join(wal, created!));
      expect(size).toBe(16 * 1024 * 1024);
      // Only what was written is on the disk: 16 MB of zeros would be 32,768 blocks of 512 bytes.
      expect(blocks).toBeLessThan(4096);
    } finally {
      fsync.mockRestore();
      await db.close();
    }
    const again = await openDatabase({ dataDir, pgliteThread: 'main' });
    try {
      const [row] = await again.query<{ n: number }>('select count(*)::int as n from t');
      expect(row!.n).toBeGreaterThan(0);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('leaves a store in memory as it is (nothing on disk to sync)', async () => {
    const db = await openDatabase({ dataDir: 'memory://', image: await emptyImage() });
    try {
      await db.exec('create table t (id int primary key)');
      await db.query('insert into t values ($1)', [1]);
      expect(await db.query('select id from t')).toEqual([{ id: 1 }]);
    } finally {
      await db.close();
    }
  });
});

describe('the embedded store\'s one connection', () => {
  it('counts the statements and transactions that had to wait for it, not those that came one after another', async () => {
    const { db } = await open('worker');
    try {
      const waits = () => db.waits!();
      const start = waits();
      await db.query('select 1');
      await db.query('select 2');
      await db.transaction(async (tx) => tx.query('select 3'));
      expect(waits()).toBe(start);
      await Promise.all([db.query('select 6'), db.query('select 4'), db.transaction(async (tx) => tx.query('select 5'))]);
      expect(waits()).toBe(start + 2);
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('PGlite on a worker thread', () => {
  it('creates a data directory that does not exist yet in a child process, then opens it, and this process stays lean', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'cnv-pglite-fresh-'));
    dirs.push(parent);
    const dataDir = join(parent, 'store');
    const before = process.memoryUsage.rss();
    const db = await openDatabase({ dataDir, pgliteThread: 'worker' });
    try {
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
      expect(await db.query('select 1 as one')).toEqual([{ one: 1 }]);
      // Creating a cluster in this process left about 700 MB resident for good; opening one takes about 140 MB.
      expect((process.memoryUsage.rss() - before) / 2 ** 20).toBeLessThan(350);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('says which directory could not be created, and why', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'cnv-pglite-blocked-'));
    dirs.push(parent);
    writeFileSync(join(parent, 'file'), 'not a directory');
    const dataDir = join(parent, 'file', 'store');
    await expect(openDatabase({ dataDir, pgliteThread: 'worker' })).rejects.toThrow(/could not be created in .*file\/store/);
  }, 120_000);

  it('refuses statements once closed, with an error', async () => {
    const { db } = await open('worker');
    await db.close();
    await expect(db.query('select 1')).rejects.toThrow();
  }, 120_000);
});
