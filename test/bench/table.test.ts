/** The benchmark's ratios beside their targets: cut, not rounded up, so a printed ratio never contradicts its mark. */
import { describe, expect, it } from 'vitest';
// bench/support/table.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
const { times } = (await import(new URL('../../bench/support/table.mjs', import.meta.url).href)) as { times: (value: number | null) => string };

describe('times', () => {
  it('cuts a ratio to two decimals, so one just under a target does not print as the target', () => {
    expect(times(0.3496)).toBe('0.34x');
    expect(times(0.35)).toBe('0.35x');
    expect(times(0.51)).toBe('0.51x');
    expect(times(1.999)).toBe('1.99x');
    expect(times(null)).toBe('-');
    expect(times(Number.NaN)).toBe('-');
  });
});
