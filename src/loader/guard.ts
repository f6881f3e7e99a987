/** Wraps fn so that an error inside it never reaches the host page: the wrapper returns undefined instead. */
export function guard<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R | undefined {
  return (...args) => {
    try {
      return fn(...args);
    } catch {
      return undefined;
    }
  };
}
