/**
 * The unit tests' file order (test/support/sequencer.ts): failed last time first, then files of unknown duration,
 * then longest first; and the committed durations it reads name this working copy's test files.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { committedDurations, runOrder } from '../support/sequencer';

const root = join(import.meta.dirname, '..', '..');

describe('the order of the unit test files', () => {
  it('runs a file that failed last first, then new ones, then the longest first, ties by path', () => {
    const order = runOrder([
      { file: 'test/a.test.ts', failedLastRun: false, duration: 100 },
      { file: 'test/b.test.ts', failedLastRun: false, duration: 30_000 },
      { file: 'test/c.test.ts', failedLastRun: false, duration: undefined },
      { file: 'test/d.test.ts', failedLastRun: true, duration: 5 },
      { file: 'test/e.test.ts', failedLastRun: false, duration: 100 },
      { file: 'test/f.test.ts', failedLastRun: false, duration: 2_000 },
    ]);
    expect(order.map((f) => f.file)).toEqual(['test/d.test.ts', 'test/c.test.ts', 'test/b.test.ts', 'test/f.test.ts', 'test/a.test.ts', 'test/e.test.ts']);
  });

  it('reads committed durations of existing test files, in milliseconds', () => {
    const durations = committedDurations();
    expect(Object.keys(durations).length).toBeGreaterThan(100);
    for (const [file, ms] of Object.entries(durations)) {
      expect(existsSync(join(root, file)), `${file} is in test/support/file-durations.json but not in the working copy (node scripts/file-durations.mjs)`).toBe(true);
      expect(Number.isInteger(ms) && ms >= 0).toBe(true);
    }
  });

  it('reads none from a file that is missing', () => {
    expect(committedDurations(new URL('file:///nonexistent/file-durations.json'))).toEqual({});
  });
});
