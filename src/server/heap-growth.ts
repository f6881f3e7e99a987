/**
 * How far V8 lets the service's JavaScript heap grow between two full garbage collections: the entries (`npm start`'s
 * demo with the service, the service alone) set it for their process before they start anything.
 *
 * After each full collection V8 sets the next one's threshold at the live size times a factor it picks itself, up to
 * 4 when the program allocates fast. Under the webhook benchmark's burst the service's thread kept about 32 MB alive
 * and the next full collection started at 41 to 82 MB: its heap reached 120 to 160 MB committed, and the process 330
 * to 350 MB resident (2026-11-27, `--trace-gc`, docs/benchmarks.md, tenth pass). With the factor fixed at 1.3, side by
 * side on the same machine: the heap 61 to 83 MB, the process 234 to 281 MB under the webhook load, reports/s 1 to 2 %
 * lower and CPU per report about 3 % higher (more frequent, smaller collections; p99 23 to 29 ms). 1.5 gave 257 to
 * 264 MB. The flag applies to every thread of the process (PGlite's worker too). It bounds nothing: a burst
 * that needs more memory still gets it, where a heap limit would end the process.
 */
import v8 from 'node:v8';

/** V8's heap growing factor as a percentage over 1 (30: the next full collection at 1.3 times the live size). */
export const HEAP_GROWING_PERCENT = 30;

/** The flag in any spelling V8 takes (dashes or underscores), with or without its value. */
const OWN_FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * The flag to set, or null when the process was started with its own (`node --heap-growing-percent=… …`): the
 * operator's choice stands.
 */
export function heapGrowthFlag(execArgv: readonly string[]): string | null {
  return execArgv.some((arg) => OWN_FLAG.test(arg)) ? null : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/**
 * Sets the factor for this process (V8 reads it at every full collection, so setting it once the process runs takes
 * effect from the next one). Returns the flag set, or null when the operator's own stands.
 */
export function useServiceHeapGrowth(execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = v8.setFlagsFromString): string | null {
  const flag = heapGrowthFlag(execArgv);
  if (flag) setFlags(flag);
  return flag;
}
