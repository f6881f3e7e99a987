/** Fitting a JSON value under a size limit by dropping its least important parts first. */

/** A step that makes a value smaller by dropping or shortening one part of it (in place). */
export type Reduction<T> = (value: T) => void;

/**
 * Serializes value, applying the reductions in order (least important part first) until `size(json) <= max`;
 * null when it is still too big after the last one. Mutates value.
 */
export const shrink = <T>(
  value: T,
  max: number,
  size: (json: string) => number,
  reductions: Reduction<T>[],
): string | null => {
  for (let i = 0; ; i++) {
    const json = JSON.stringify(value);
    if (size(json) <= max) return json;
    const reduce = reductions[i];
    if (!reduce) return null;
    reduce(value);
  }
};
