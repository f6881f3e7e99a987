/**
 * Wraps an entry point (the boot, an event listener, an API method, a queued call) so that an error inside it never
 * reaches the host page: the wrapper returns undefined instead. Entry points are guarded, helpers are not: one
 * try/catch per way into the loader, not one per function.
 */
export const guard = <A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R | undefined => {
  return (...args) => {
    try {
      return fn(...args);
    } catch {
      // the entry point failed: its caller gets undefined
    }
  };
};
