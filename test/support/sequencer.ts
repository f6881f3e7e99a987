/**
 * The order the unit test files run in: longest first, by the durations committed in file-durations.json (written by
 * scripts/file-durations.mjs from a run's results), so that a fresh clone runs them as a working copy does.
 *
 * Vitest's own order is longest first by its results cache of the last run on the machine (node_modules/.vite), and
 * in the order the files were found when there is none, as in a fresh clone or CI. With two workers that keep their
 * module cache for every file they run (vitest.config.ts), the second order measured 349 s against 245 s for the same
 * files in a working copy on 2026-11-28 (their tests' time 578 against 433 s, nearly every file slower, the small
 * ones by 2 to 4 s each), and fresh clones' unit step took 308 to 329 s against 245 to 264 s in working copies the
 * same days.
 *
 * Files not in the committed list (new ones) take their duration from vitest's cache when it has one, else run first,
 * as vitest runs files it does not know; a file that failed in the last run on this machine runs first, as in vitest.
 */
import { relative } from 'node:path';
import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** What the order needs of a test file: where it is, whether it failed last time, how long it took, where it runs. */
export interface FileFacts {
  file: string;
  failedLastRun: boolean;
  /** Milliseconds, or undefined when unknown. */
  duration: number | undefined;
  /** The file's test environment (its `@vitest-environment` comment); undefined for the default, node. */
  environment?: string | undefined;
}

/**
 * The files in the order to run them: failed last time first, then unknown ones, then the rest; within each, the files
 * of the default environment (node) before those of another (happy-dom: the loader's, all short), longest first; ties
 * by path.
 *
 * Why the environments apart: a vitest worker that keeps its process for the next file (`isolate: false`) keeps it only
 * when the next file in the queue has the same environment; otherwise it ends and a new process starts, importing
 * vitest, Fastify, PGlite and happy-dom again (1.5 to 2 s of CPU). Longest first over all files put the short
 * happy-dom files among the short node files: the end of a run started 42 processes in its last 15 s (their CPU
 * profiles, 2026-11-29).
 */
export function runOrder<T extends FileFacts>(files: readonly T[]): T[] {
  const rank = (f: FileFacts) => (f.failedLastRun ? 0 : f.duration === undefined ? 1 : 2);
  return [...files].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.environment ?? '').localeCompare(b.environment ?? '') || // the default ('') first
      (b.duration ?? 0) - (a.duration ?? 0) ||
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0),
  );
}

/** A test file's environment as its `@vitest-environment` comment names it (at the top of the file), or undefined. */
export function declaredEnvironment(source: string): string | undefined {
  return /@vitest-environment\s+([\w-]+)/.exec(source.slice(0, 2000))?.[1];
}

/** The committed durations, by path from the project's root. */
export function committedDurations(path = new URL('./file-durations.json', import.meta.url)): Record<string, number> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export class KnownDurationsSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = committedDurations();
    const root = this.ctx.config.root;
    const facts = files.map((spec) => {
      const file = relative(root, spec.moduleId).split('\\').join('/');
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      return {
        spec, file, failedLastRun: cached?.failed ?? false, duration: known[file] ?? cached?.duration,
        environment: declaredEnvironment(readFileSync(spec.moduleId, 'utf8')),
      };
    });
    return runOrder(facts).map((f) => f.spec);
  }
}
