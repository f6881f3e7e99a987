/** Small statistics over samples: median and percentiles by the nearest-rank method. */

/** The p-th percentile (0..100) of the samples, nearest rank; NaN when there are none. */
export function percentile(samples, p) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** The median of the samples (mean of the middle two for an even count). */
export function median(samples) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The sum of `value` over `items`. */
export function sumOf(items, value) {
  return items.reduce((n, item) => n + value(item), 0);
}

/** `a / b`, or null when it has no meaning (a negative or b not positive, as noise can make a difference of medians). */
export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || a < 0 || b <= 0) return null;
  return a / b;
}
