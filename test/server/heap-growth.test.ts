import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag, useServiceHeapGrowth } from '../../src/server/heap-growth';

/**
 * A program that allocates fast and keeps 100,000 to 200,000 small objects alive, as a busy service keeps its requests
 * in flight; it sets the flag given as its argument (as the entries do, once running) and prints its heap's peak.
 */
const CHURN = `
const v8 = require('node:v8');
const flag = process.argv[1];
if (flag) v8.setFlagsFromString(flag);
let kept = [];
let peak = 0;
for (let i = 0; i < 3e6; i++) {
  kept.push({ a: i, b: 'x' + i, c: [i] });
  if (kept.length > 200000) kept = kept.slice(100000);
  if (i % 1000 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
}
process.stdout.write(String(peak));
`;

function peakHeapWith(flag: string | null): number {
  const run = spawnSync(process.execPath, ['-e', CHURN, flag ?? ''], { encoding: 'utf8', timeout: 60_000 });
  expect(run.stderr).toBe(''); // V8 names an unknown flag on stderr
  return Number(run.stdout);
}

describe('the service heap growth (V8 heap growing factor)', () => {
  it('is the flag V8 knows, and keeps a fast-allocating heap well below what V8 lets it reach by itself', () => {
    const flag = heapGrowthFlag([])!;
    expect(flag).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    const unset = peakHeapWith(null);
    const set = peakHeapWith(flag);
    // Measured: about 95 MB against 155 to 185 MB.
    expect(set).toBeGreaterThan(0);
    expect(set).toBeLessThan(unset * 0.8);
  }, 60_000); // two child processes allocating to their peak: 10 s alone, over 20 s on a machine busy with CI

  it("leaves an operator's own choice alone, in either spelling", () => {
    expect(heapGrowthFlag(['--heap-growing-percent=50'])).toBeNull();
    expect(heapGrowthFlag(['--heap_growing_percent=10'])).toBeNull();
    expect(heapGrowthFlag(['--max-old-space-size=512', '--enable-source-maps'])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it('sets the flag once for the process, or nothing when the operator chose', () => {
    const set: string[] = [];
    expect(useServiceHeapGrowth([], (flags) => set.push(flags))).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(useServiceHeapGrowth(['--heap-growing-percent=80'], (flags) => set.push(flags))).toBeNull();
    expect(set).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });
});
