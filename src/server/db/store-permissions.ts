/**
 * The embedded store's files are readable by their owner only: the data directory 0700, every directory in it 0700 and
 * every file 0600, as PostgreSQL itself requires of a data directory. PGlite writes through Emscripten's NODEFS, which
 * creates files with mode 0666 and directories 0777 masked only by the process umask (about 900 files of `base/` are
 * 0666 under umask 000), so the modes are fixed at every open, and the umask of a process that holds the store is
 * narrowed to 077 so what PGlite creates later (new relations, WAL segments) is born private.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const STORE_DIR_MODE = 0o700;
export const STORE_FILE_MODE = 0o600;

/** What securing the store did. */
export interface StorePermissions {
  /** Files and directories whose mode was changed. */
  changed: number;
  /** Whether the process umask now keeps new files private (false where a worker thread may not set it). */
  umaskNarrowed: boolean;
}

function fix(path: string, mode: number): number {
  const current = lstatSync(path).mode & 0o777;
  if (current === mode) return 0;
  chmodSync(path, mode);
  return 1;
}

/** Sets the modes of everything under `dir` (symbolic links are left alone, never followed); returns how many changed. */
function secureTree(dir: string): number {
  let changed = fix(dir, STORE_DIR_MODE);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) changed += secureTree(path);
    else if (entry.isFile()) changed += fix(path, STORE_FILE_MODE);
  }
  return changed;
}

/** Narrows the umask so files created from now on are private; false where the process may not change it. */
function narrowUmask(): boolean {
  try {
    process.umask(process.umask(0o077) | 0o077);
    return true;
  } catch {
    return false;
  }
}

/** Creates the data directory (0700) when missing, then makes it and everything in it private. */
export function secureStoreFiles(dataDir: string): StorePermissions {
  const umaskNarrowed = narrowUmask();
  mkdirSync(dataDir, { recursive: true, mode: STORE_DIR_MODE });
  return { changed: secureTree(dataDir), umaskNarrowed };
}

/** The log line of a secured store: the directory and counts, nothing from inside the files. */
export function describeStorePermissions(dataDir: string, result: StorePermissions): string {
  return (
    `embedded store ${dataDir}: directory ${STORE_DIR_MODE.toString(8).padStart(4, '0')}, files ${STORE_FILE_MODE.toString(8).padStart(4, '0')} ` +
    `(${result.changed === 0 ? 'already so' : `${result.changed} modes fixed`}${result.umaskNarrowed ? '; new files private (umask 077)' : ''})`
  );
}
