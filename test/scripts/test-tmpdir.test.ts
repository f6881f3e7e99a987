/**
 * Where `npm test` puts its steps' temporary directories (scripts/test-tmpdir.mjs): a directory of its own on a tmpfs
 * with room, the root a person names, or the system's default.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
// @ts-expect-error scripts/ are plain JavaScript without declarations.
import { testTmpdir, TMPFS_MAGIC, TMPFS_MIN_FREE } from '../../scripts/test-tmpdir.mjs';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

/** A root standing for /dev/shm, with statfs answering what the test says about it. */
function fakeRoot(type: number, free: number) {
  const root = mkdtempSync(join(tmpdir(), 'cnv-tmpdir-root-'));
  made.push(root);
  return { defaultRoot: root, statfs: () => ({ type, bavail: free / 4096, bsize: 4096 }) };
}

describe.runIf(process.platform === 'linux')('the temporary root of npm test', () => {
  it('is a new directory of its own on a tmpfs with room', () => {
    const root = fakeRoot(TMPFS_MAGIC, TMPFS_MIN_FREE);
    const dir = testTmpdir({ chosen: undefined, ...root }) as string;
    expect(dirname(dir)).toBe(root.defaultRoot);
    expect(statSync(dir).isDirectory()).toBe(true);
    const again = testTmpdir({ chosen: undefined, ...root }) as string;
    expect(again).not.toBe(dir);
  });

  it('is the default when the root is no tmpfs, has too little room, or cannot be read', () => {
    expect(testTmpdir({ chosen: undefined, ...fakeRoot(0xef53, 100 * TMPFS_MIN_FREE) })).toBeNull(); // ext4
    expect(testTmpdir({ chosen: undefined, ...fakeRoot(TMPFS_MAGIC, TMPFS_MIN_FREE - 4096) })).toBeNull();
    expect(testTmpdir({ chosen: undefined, defaultRoot: join(tmpdir(), 'cnv-no-such-root'), statfs: () => { throw new Error('ENOENT'); } })).toBeNull();
  });

  it('is under the root CNV_TEST_TMPDIR names, whatever its file system, and the default for off', () => {
    const named = mkdtempSync(join(tmpdir(), 'cnv-tmpdir-named-'));
    made.push(named);
    const statfs = vi.fn();
    const dir = testTmpdir({ chosen: named, defaultRoot: '/nowhere', statfs }) as string;
    expect(dirname(dir)).toBe(named);
    expect(statfs).not.toHaveBeenCalled();
    expect(testTmpdir({ chosen: 'off', ...fakeRoot(TMPFS_MAGIC, TMPFS_MIN_FREE) })).toBeNull();
  });

  it('says so and takes the default when the named root cannot be used', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const missing = join(tmpdir(), 'cnv-tmpdir-missing', 'deeper');
    expect(testTmpdir({ chosen: missing })).toBeNull();
    expect(existsSync(missing)).toBe(false);
    expect(error).toHaveBeenCalledWith(expect.stringContaining(`CNV_TEST_TMPDIR=${missing} cannot be used`));
  });
});
