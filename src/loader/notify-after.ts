/** Following a page's own method calls (history.pushState, dataLayer.push) without changing what they do. */

/**
 * Replaces target[name] by a wrapper that calls the original (same `this`, arguments and result), then notify, which
 * must never throw (callers pass a guarded function): an error in the original (the page's) still reaches the page.
 * The wrapper is defined as an own property, not assigned: on a hardened page (SES lockdown(), frozen built-in
 * prototypes) the inherited push or pushState is read-only and an assignment is silently refused, so the loader would
 * never hear of a consent update, a queued call or a route change. It stays writable, so a tag that later wraps
 * dataLayer.push by assignment (Google's) still can.
 */
export const notifyAfter = <T extends object, K extends keyof T>(target: T, name: K, notify: () => void): void => {
  const original = target[name] as (...args: unknown[]) => unknown;
  Object.defineProperty(target, name, {
    value(this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      notify();
      return result;
    },
    writable: true,
    configurable: true,
  });
};
