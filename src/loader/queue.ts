/** The calls a page queued in window.__service.q before the loader arrived. */
import { guard } from './guard';
import { notifyAfter } from './notify-after';

/** One queued call: the method name and its arguments. */
export type QueuedCall = [method: string, args?: unknown[]];

/**
 * Runs the calls queued in api.q in order against api (unknown methods are skipped), then runs every later push at
 * once (push is followed, as dataLayer.push is, so a hardened page's frozen Array.prototype cannot refuse it); creates q
 * when the page set none.
 */
export const drainQueue = (api: { q?: QueuedCall[] }): void => {
  const queue = api.q || (api.q = []);
  const run = guard((call: QueuedCall) =>
    (api as Record<string, (...args: unknown[]) => unknown>)[call[0]]!.apply(api, call[1] || []),
  );
  const drain = () => queue.splice(0).forEach(run);
  notifyAfter(queue, 'push', drain);
  drain();
};
