/** Following a page's own method calls (history.pushState, dataLayer.push) without changing what they do. */

/**
 * Replaces target[name] by a wrapper that calls the original (same `this`, arguments and result), then notify. An error
 * in notify (the loader's) never reaches the page's call; an error in the original (the page's) still does.
 */
export function notifyAfter<T, K extends keyof T>(target: T, name: K, notify: () => void): void {
  const original = target[name] as (...args: unknown[]) => unknown;
  target[name] = function (this: unknown, ...args: unknown[]) {
    const result = original.apply(this, args);
    try {
      notify();
    } catch {
      // the loader's failure is not the page's
    }
    return result;
  } as T[K];
}
