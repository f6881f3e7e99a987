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

/** Work a worker has under way (rounds, sends), which its stop waits for. */
export interface WorkInFlight {
  /** Counts `work` in until it settles; returns it as it is (its caller handles a rejection). */
  track<T>(work: Promise<T>): Promise<T>;
  /** Resolves once everything tracked, and what it starts meanwhile, has settled; never rejects. */
  settled(): Promise<void>;
  /**
   * The same, but for at most `graceMs` (its timer never keeps the process alive). A worker's stop gives its sends in
   * flight this long to end on their own before it aborts them: a send cut short after the platform took it is sent
   * again by another process (a double the platform must dedupe), one that ends is recorded once.
   */
  settledWithin(graceMs: number): Promise<void>;
}

export function workInFlight(): WorkInFlight {
  const active = new Set<Promise<unknown>>();
  // Asked again each time what it held has settled: work under way may start more (a round, its sends).
  const settledUnless = async (over: () => boolean, grace: Promise<void>): Promise<void> => {
    for (let work = [...active]; work.length > 0 && !over(); work = [...active]) await Promise.race([Promise.allSettled(work), grace]);
  };
  return {
    track(work) {
      // The caller handles `work`'s rejection; the tracked copy must not raise an unhandled one.
      const tracked = work.catch(() => undefined).finally(() => active.delete(tracked));
      active.add(tracked);
      return work;
    },
    settled: () => settledUnless(() => false, new Promise<void>(() => undefined)),
    async settledWithin(graceMs) {
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
        await settledUnless(() => over, grace);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
