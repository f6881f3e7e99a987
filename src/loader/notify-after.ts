/** Following a page's own method calls (history.pushState, dataLayer.push) without changing what they do. */

/**
 * Replaces target[name] by a wrapper that calls the original (same `this`, arguments and result), then notify, which
 * must never throw (callers pass a guarded function): an error in the original (the page's) still reaches the page.
 */
export const notifyAfter = <T, K extends keyof T>(target: T, name: K, notify: () => void): void => {
  const original = target[name] as (...args: unknown[]) => unknown;
  target[name] = function (this: unknown, ...args: unknown[]) {
    const result = original.apply(this, args);
    notify();
    return result;
  } as T[K];
};
