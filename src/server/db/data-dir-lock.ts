/**
 * An advisory lock on the embedded store's data directory. PGlite is one process's database: a second process opening
 * the same directory (the service twice, or `cnv` while the service runs) would read stale data and corrupt it.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCK_FILE = 'cnv.lock';
/** Locks held by this process: a lock file naming our own pid is ours only if we took it (pid 1 repeats in containers). */
const held = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock of a data directory for `owner` (e.g. `the cnv service`); throws a clear error when it is in use. Returns the release. */
export function lockDataDir(dataDir: string, owner: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const mine = JSON.stringify({ pid: process.pid, owner, since: new Date().toISOString() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, mine, { flag: 'wx' });
      held.add(path);
      return () => {
        held.delete(path);
        try {
          if (readFileSync(path, 'utf8') === mine) unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder: { pid?: number; owner?: string } = {};
    try {
      holder = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      // unreadable: treat as stale
    }
    const pid = Number(holder.pid);
    const inUse = held.has(path) || (Number.isInteger(pid) && pid !== process.pid && isAlive(pid));
    if (inUse) {
      throw new Error(
        `The data directory ${dataDir} is in use by ${holder.owner ?? 'another process'} (pid ${pid}). ` +
          'Only one process can use the embedded store: stop it first, or set DATABASE_URL to a PostgreSQL server to share the data.',
      );
    }
    // Left behind by a process that is gone.
    try {
      unlinkSync(path);
    } catch {
      // raced with another starter; the next attempt decides
    }
  }
  throw new Error(`Could not lock the data directory ${dataDir}.`);
}

const ADDRESS_FILE = 'cnv.address';

/**
 * Notes beside the lock the address the service holding it answers at, for the `cnv` commands that ask the running
 * service while it holds the embedded store (its store, where the address is recorded too, is closed to them).
 */
export function noteServiceAddress(dataDir: string, url: string): void {
  writeFileSync(join(dataDir, ADDRESS_FILE), JSON.stringify({ pid: process.pid, url }), { mode: 0o600 });
}

/** The address noted by the process that holds the data directory's lock now, or null (none holds it, or it noted none). */
export function runningServiceAddress(dataDir: string): string | null {
  try {
    const holder = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')) as { pid?: unknown };
    const noted = JSON.parse(readFileSync(join(dataDir, ADDRESS_FILE), 'utf8')) as { pid?: unknown; url?: unknown };
    const pid = Number(holder.pid);
    const alive = Number.isInteger(pid) && pid > 0 && isAlive(pid);
    return alive && noted.pid === pid && typeof noted.url === 'string' ? noted.url : null;
  } catch {
    return null; // no lock, no note, or one being written
  }
}
