/**
 * The embedded store's files are readable by their owner only: the data directory 0700, every directory in it 0700 and
 * every file 0600, as PostgreSQL itself requires of a data directory. PGlite writes through Emscripten's NODEFS, which
 * creates files with mode 0666 and directories 0777 masked only by the process umask (about 900 files of `base/` are
 * 0666 under umask 000), so the modes are fixed at every open, and the umask of a process that holds the store is
 * narrowed to 077 so what PGlite creates later (new relations, WAL segments) is born private.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

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

/** Why a data directory cannot be made, in words, from the error of its mkdir. */
function dataDirProblem(error: NodeJS.ErrnoException, path: string): string {
  switch (error.code) {
    case 'EEXIST':
    case 'ENOTDIR':
      return `${path} is a file, not a directory`;
    case 'EACCES':
    case 'EPERM':
      return `this user may not create ${path}`;
    case 'EROFS':
      return `${path} is on a read-only file system`;
    case 'ENOSPC':
      return 'the disk is full';
    default:
      return `${path} cannot be created there (${error.code ?? error.message})`;
  }
}

/**
 * Creates the data directory (0700) and its missing parents, one level at a time: `mkdir -p` semantics with an error
 * that names CNV_DATA_DIR and says why (Node's recursive mkdir answers raw errno text, and under /proc it never returns).
 */
export function makeDataDir(dataDir: string): void {
  const missing: string[] = [];
  for (let path = resolve(dataDir); ; path = dirname(path)) {
    let stat: Stats | undefined;
    try {
      stat = statSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') {
        throw new Error(`CNV_DATA_DIR (${dataDir}) cannot be used: ${dataDirProblem(error as NodeJS.ErrnoException, path)}`);
      }
    }
    if (stat) {
      if (!stat.isDirectory()) throw new Error(`CNV_DATA_DIR (${dataDir}) cannot be used: ${path} is a file, not a directory`);
      break;
    }
    missing.unshift(path);
    if (dirname(path) === path) break;
  }
  for (const path of missing) {
    try {
      mkdirSync(path, { mode: STORE_DIR_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(path).isDirectory()) continue; // made meanwhile
      throw new Error(`CNV_DATA_DIR (${dataDir}) cannot be used: ${dataDirProblem(error as NodeJS.ErrnoException, path)}`);
    }
  }
}

/** Creates the data directory (0700) when missing, then makes it and everything in it private. */
export function secureStoreFiles(dataDir: string): StorePermissions {
  const umaskNarrowed = narrowUmask();
  makeDataDir(dataDir);
  return { changed: secureTree(dataDir), umaskNarrowed };
}

/** The log line of a secured store: the directory and counts, nothing from inside the files. */
export function describeStorePermissions(dataDir: string, result: StorePermissions): string {
  return (
    `embedded store ${dataDir}: directory ${STORE_DIR_MODE.toString(8).padStart(4, '0')}, files ${STORE_FILE_MODE.toString(8).padStart(4, '0')} ` +
    `(${result.changed === 0 ? 'already so' : `${result.changed} modes fixed`}${result.umaskNarrowed ? '; new files private (umask 077)' : ''})`
  );
}
