/**
 * The abort signal of one outgoing request: aborted when the service shuts down (`shutdown`, a signal that lives as
 * long as the worker sending) or when `timeoutMs` have passed, whichever comes first.
 *
 * Not `AbortSignal.any([shutdown, AbortSignal.timeout(ms)])`: on Node 20 each such call leaves a WeakRef in the
 * long-lived signal's set of dependent signals for good (nodejs/node#55351). A 25-minute soak of the service measured
 * 8,120 more WeakRefs after 8,139 uploads to an ad platform, retained by the delivery worker's stop signal: about 85
 * bytes a send, so a deployment whose conversions go out one per upload would keep some 85 MB per million until it
 * restarts. Here the request's own controller listens to `shutdown`, and `end()` removes that listener and the timer.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Whether the signal was aborted by the timeout (not by the shutdown). */
  readonly timedOut: boolean;
  /** Call when the request is over (in a `finally`): nothing of it stays attached to `shutdown`. */
  end(): void;
}

export function deadline(shutdown: AbortSignal, timeoutMs: number): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const end = () => {
    clearTimeout(timer);
    shutdown.removeEventListener('abort', onShutdown);
  };
  function onShutdown() {
    end();
    controller.abort(shutdown.reason);
  }
  if (shutdown.aborted) {
    controller.abort(shutdown.reason);
  } else {
    shutdown.addEventListener('abort', onShutdown, { once: true });
    timer = setTimeout(() => {
      end();
      timedOut = true;
      controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    timer.unref();
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    end,
  };
}

/**
 * Waits until `pending()` holds nothing more to wait for (asked again each time what it held has settled: work under
 * way may start more, as a round its sends) or `graceMs` have passed, whichever comes first; never rejects, and its
 * timer never keeps the process alive. A worker's stop gives its sends in flight this long to end on their own before
 * it aborts them: a send cut short after the platform took it is sent again by another process (a double the
 * platform must dedupe), one that ends is recorded once.
 */
export async function settledWithin(pending: () => Iterable<Promise<unknown>>, graceMs: number): Promise<void> {
  let over = false;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      over = true;
      resolve();
    }, graceMs);
    timer.unref();
  });
  try {
    for (let work = [...pending()]; work.length > 0 && !over; work = [...pending()]) {
      await Promise.race([Promise.allSettled(work), grace]);
    }
  } finally {
    clearTimeout(timer);
  }
}
