/**
 * The embedded store's files are its owner's only: after a first start (initdb under a wide-open umask) and after a
 * restart (files an older version left readable), the data directory and every directory in it are 0700 and every file
 * 0600, fixed at start with a log line that says so; files PGlite creates while running are born private.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../src/server/service';
import { loadSettings } from '../../src/server/settings';

const TEST_TIMEOUT = 120_000;

/** Every path under `dir` with its mode, directories marked. */
function modes(dir: string): Array<{ path: string; mode: number; dir: boolean }> {
  const out = [{ path: dir, mode: statSync(dir).mode & 0o777, dir: true }];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...modes(path));
    else if (entry.isFile()) out.push({ path, mode: statSync(path).mode & 0o777, dir: false });
  }
  return out;
}

function notPrivate(dir: string): string[] {
  return modes(dir)
    .filter((m) => m.mode !== (m.dir ? 0o700 : 0o600))
    .map((m) => `${m.path} ${m.mode.toString(8)}`);
}

describe('the embedded store\'s file modes', () => {
  let parent: string;
  let dir: string;
  let running: RunningService | undefined;
  const lines: string[] = [];
  const originalUmask = process.umask();
  const start = () =>
    startService(
      loadSettings({ HOST: '127.0.0.1', PORT: '0', CNV_DATA_DIR: dir, CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example' }),
      { logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } as never },
    );

  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), 'cnv-modes-'));
    dir = join(parent, '.cnv-data');
  });
  afterAll(async () => {
    await running?.close();
    process.umask(originalUmask);
    rmSync(parent, { recursive: true, force: true });
  });

  it('are 0700 and 0600 after a first start under umask 000, with a log line that says so', async () => {
    process.umask(0);
    running = await start();
    expect(modes(dir).filter((m) => !m.dir).length).toBeGreaterThan(500);
    expect(notPrivate(dir)).toEqual([]);
    const line = lines.find((l) => l.includes('embedded store'));
    expect(line).toContain(`embedded store ${dir}: directory 0700, files 0600`);
    // Files PGlite creates while running (a new table's relation files) are private too.
    await running.db.query('create table modes_probe as select generate_series(1, 5000) as n');
    await running.db.query('checkpoint');
    expect(notPrivate(dir)).toEqual([]);
    // No personal data or key in that line: a path and counts.
    expect(line).not.toMatch(/cnv_sk_|@/);
  }, TEST_TIMEOUT);

  it('are fixed again at a restart when something left them readable', async () => {
    await running!.close();
    running = undefined;
    process.umask(0o022);
    chmodSync(dir, 0o755);
    const base = join(dir, 'base');
    chmodSync(base, 0o777);
    const someFile = modes(base).find((m) => !m.dir)!.path;
    chmodSync(someFile, 0o666);
    lines.length = 0;
    running = await start();
    expect(notPrivate(dir)).toEqual([]);
    expect(lines.find((l) => l.includes('embedded store'))).toMatch(/directory 0700, files 0600 \([3-9]\d* modes fixed/);
  }, TEST_TIMEOUT);
});

describe('making the data directory', () => {
  it('creates missing parents one level at a time, and names CNV_DATA_DIR and the reason when it cannot', async () => {
    const { makeDataDir } = await import('../../src/server/db/store-permissions');
    const { mkdtempSync, statSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const root = mkdtempSync(join(tmpdir(), 'cnv-datadir-'));
    try {
      const nested = join(root, 'a', 'b', 'c');
      makeDataDir(nested);
      expect(statSync(nested).isDirectory()).toBe(true);
      expect(statSync(nested).mode & 0o777).toBe(0o700);
      makeDataDir(nested); // already there: nothing to do
      const file = join(root, 'file');
      writeFileSync(file, 'x');
      expect(() => makeDataDir(file)).toThrow(`CNV_DATA_DIR (${file}) cannot be used: ${file} is a file, not a directory`);
      expect(() => makeDataDir(join(file, 'x'))).toThrow(`cannot be used: ${file} is a file, not a directory`);
      expect(() => makeDataDir('/proc/cnv-data-test')).toThrow(/^CNV_DATA_DIR \(\/proc\/cnv-data-test\) cannot be used: /);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
