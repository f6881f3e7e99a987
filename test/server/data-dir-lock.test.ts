import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockDataDir } from '../../src/server/db/data-dir-lock';

describe('the embedded store’s data directory lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cnv-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets one holder in at a time and names the holder to the next', () => {
    const release = lockDataDir(dir, 'the cnv service');
    expect(() => lockDataDir(dir, 'the cnv command')).toThrow(/in use by the cnv service \(pid \d+\)/);
    release();
    expect(existsSync(join(dir, 'cnv.lock'))).toBe(false);
    lockDataDir(dir, 'the cnv command')();
  });

  it('takes over a lock left behind by a process that is gone', () => {
    writeFileSync(join(dir, 'cnv.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, owner: 'a crashed service' }));
    const release = lockDataDir(dir, 'the cnv service');
    expect(JSON.parse(readFileSync(join(dir, 'cnv.lock'), 'utf8'))).toMatchObject({ pid: process.pid, owner: 'the cnv service' });
    release();
  });

  it('takes over a lock naming its own pid that it does not hold (pid 1 again after a container restart)', () => {
    writeFileSync(join(dir, 'cnv.lock'), JSON.stringify({ pid: process.pid, owner: 'the previous container' }));
    lockDataDir(dir, 'the cnv service')();
  });
});
