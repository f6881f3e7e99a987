/**
 * The temporary root `npm test` gives its steps (scripts/test.mjs): see testTmpdir.
 */
import { mkdtempSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

/** statfs's type of a tmpfs (linux/magic.h). */
export const TMPFS_MAGIC = 0x01021994;
/** The room a memory-backed temporary root must have free: the tests' data directories are 40 MB each, a few at once. */
export const TMPFS_MIN_FREE = 2 * 1024 ** 3;

/**
 * Where the steps' temporary directories go (their TMPDIR): a directory of its own on /dev/shm when that is a tmpfs
 * with room, else the system's default. The tests make a store's data directory for every service they start (a copy
 * of the migrated image, some 1,150 files) and PGlite syncs every commit into it: on the disk of a 2-core VM that was a
 * fifth of the store-heavy test files' time, mostly kernel time creating files (2026-11-28: 71 and 89 s against 84 and
 * 115 s for the same files, alternating). What the tests check does not change: each fsync is still made, and the
 * service's own data directory is wherever CNV_DATA_DIR says. CNV_TEST_TMPDIR names another root, or `off` keeps the
 * default. scripts/test.mjs removes it, with whatever a test left in it, however the run ends.
 */
export function testTmpdir({ chosen = process.env.CNV_TEST_TMPDIR, defaultRoot = '/dev/shm', statfs = statfsSync } = {}) {
  if (chosen === 'off' || (!chosen && process.platform !== 'linux')) return null; // /dev/shm is Linux's
  const root = chosen || defaultRoot;
  try {
    if (!chosen) {
      const fs = statfs(root);
      if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < TMPFS_MIN_FREE) return null;
    }
    return mkdtempSync(join(root, 'cnv-test-'));
  } catch (error) {
    if (chosen) console.error(`CNV_TEST_TMPDIR=${chosen} cannot be used (${error.message}): the system's temporary directory instead`);
    return null;
  }
}
