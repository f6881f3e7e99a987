/**
 * The memory allocator's settings the service runs with on Linux with glibc (Debian, Ubuntu, RHEL; not Alpine's musl).
 *
 * glibc's malloc starts by giving every allocation of 128 KB or more its own mapping, returned to the system when freed,
 * and trims a thread's heap once 128 KB at its top are free. The first time it frees such a mapping, it raises both
 * thresholds to that size (twice that size for the trim), for good: V8 compiling PGlite's PostgreSQL (WASM) on its
 * background threads allocates and frees blocks of 2 to 7 MB, so from then on every allocation under about 7 MB came
 * from the threads' heaps, which were trimmed only when 14 MB at their top were free. Under the webhook benchmark the
 * threads' heaps held 95 to 100 MB of the service's resident memory.
 *
 * Setting the threshold ourselves turns that adjustment off: allocations from 1 MB up get their own mapping, and the
 * heaps are trimmed at glibc's 128 KB. Measured side by side (docs/benchmarks.md): the threads' heaps 45 to 60 MB, the
 * service's peak RSS under the webhook load 20 to 55 MB lower, CPU per report unchanged within the noise. A threshold
 * of 128 KB cost 10 to 15 % more CPU per report (every larger buffer its own mapping).
 *
 * glibc reads GLIBC_TUNABLES when a process starts, before any code of ours runs: the setting can only be given to a
 * process being started, which is why `npm start` goes through the launcher (main.ts).
 */
export const MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=1048576';

/** Whether this process runs on glibc (what GLIBC_TUNABLES speaks to). */
export function onGlibc(): boolean {
  if (process.platform !== 'linux') return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: unknown } } | undefined;
  return typeof report?.header?.glibcVersionRuntime === 'string';
}

/**
 * The environment to start the service with: `env` with MALLOC_TUNABLES added to its GLIBC_TUNABLES, or undefined when
 * there is nothing to add (not glibc, or the operator already chose a threshold: theirs stands).
 */
export function withMallocTunables(env: NodeJS.ProcessEnv, glibc: boolean = onGlibc()): NodeJS.ProcessEnv | undefined {
  if (!glibc) return undefined;
  const tunables = env.GLIBC_TUNABLES ?? '';
  if (/(^|:)glibc\.malloc\.mmap_threshold=/.test(tunables)) return undefined;
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${MALLOC_TUNABLES}` : MALLOC_TUNABLES };
}
