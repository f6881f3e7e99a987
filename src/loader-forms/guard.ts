/** Wraps fn so that an error inside it never reaches the host page: the wrapper returns undefined instead. */
// The same promise as src/loader/guard.ts, kept here so this bundle does not depend on the core loader's files.
export function guard<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R | undefined {
  return (...args) => {
    try {
      return fn(...args);
    } catch {
      return undefined;
    }
  };
}
