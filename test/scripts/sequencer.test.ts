/**
 * The unit tests' file order (test/support/sequencer.ts): failed last time first, then files of unknown duration,
 * then the rest, the default environment's files before the others' and longest first; and the committed durations it
 * reads name this working copy's test files.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { committedDurations, declaredEnvironment, runOrder } from '../support/sequencer';

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

  it('runs the files of another environment after those of the default one, so a worker keeps its process', () => {
    const order = runOrder([
      { file: 'test/loader/a.test.ts', failedLastRun: false, duration: 900, environment: 'happy-dom' },
      { file: 'test/server/b.test.ts', failedLastRun: false, duration: 300 },
      { file: 'test/loader/c.test.ts', failedLastRun: false, duration: 50, environment: 'happy-dom' },
      { file: 'test/server/d.test.ts', failedLastRun: false, duration: 20_000 },
      { file: 'test/server/e.test.ts', failedLastRun: false, duration: 10 },
    ]);
    expect(order.map((f) => f.file)).toEqual([
      'test/server/d.test.ts', 'test/server/b.test.ts', 'test/server/e.test.ts', 'test/loader/a.test.ts', 'test/loader/c.test.ts',
    ]);
  });

  it('reads a file\'s environment from its comment that names it', () => {
    // The tag is spliced: vitest reads it at the top of this very file and would run the file in that environment.
    const tag = ['@vitest', 'environment'].join('-');
    expect(declaredEnvironment(`// ${tag} happy-dom\nimport { it } from "vitest";`)).toBe('happy-dom');
    expect(declaredEnvironment(`/**\n * ${tag} jsdom\n */`)).toBe('jsdom');
    expect(declaredEnvironment('import { it } from "vitest";')).toBeUndefined();
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
