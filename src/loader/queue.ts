/** The calls a page queued in window.__service.q before the loader arrived. */
import { guard } from './guard';

/** One queued call: the method name and its arguments. */
export type QueuedCall = [method: string, args?: unknown[]];

/**
 * Runs the calls queued in api.q in order against api (unknown methods are skipped), then makes every later push run at
 * once; creates q when the page set none.
 */
export const drainQueue = (api: { q?: QueuedCall[] }): void => {
  const queue = api.q || (api.q = []);
  const run = guard((call: QueuedCall) => {
    (api as Record<string, (...args: unknown[]) => unknown>)[call[0]]!.apply(api, call[1] || []);
  });
  queue.push = (...calls: QueuedCall[]) => {
    calls.forEach(run);
    return queue.length;
  };
  queue.splice(0).forEach(run);
};
