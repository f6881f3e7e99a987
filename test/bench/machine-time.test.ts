import { afterEach, describe, expect, it, vi } from 'vitest';

type Counters = Record<'user' | 'nice' | 'system' | 'idle' | 'iowait' | 'irq' | 'softirq' | 'steal', number>;
type Shares = { steal: number; idle: number; busy: number; peak_steal?: number };

// bench/support/machine-time.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
const machineTime = (await import(new URL('../../bench/support/machine-time.mjs', import.meta.url).href)) as {
  parseProcStatCpu: (text: string) => Counters | null;
  machineShares: (before: Counters | null, after: Counters | null) => Shares | null;
  withMachineTime: <T>(fn: () => Promise<T>, options: { sampleMs: number; read: () => Counters | null }) => Promise<{ result: T; machine: Shares | null }>;
  isDisturbed: (machine: Shares | null) => boolean;
  worstOf: (...machines: (Shares | null | undefined)[]) => Shares | null;
  machineLine: (what: string, machine: Shares | null) => string;
  stealCell: (machine: Shares | null) => string;
};
const { parseProcStatCpu, machineShares, withMachineTime, isDisturbed, worstOf, machineLine, stealCell } = machineTime;

/** Counters in /proc/stat's order: user nice system idle iowait irq softirq steal. */
const counters = (user: number, idle: number, steal: number, system = 0): Counters => ({ user, nice: 0, system, idle, iowait: 0, irq: 0, softirq: 0, steal });

describe('parseProcStatCpu (the aggregate cpu line of /proc/stat)', () => {
  it('reads the eight counters of the aggregate line, not a per-core one', () => {
    const text = 'cpu  9067060 261455 1932171 5498166 60405 0 112596 284219 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345\n';
    expect(parseProcStatCpu(text)).toEqual({ user: 9067060, nice: 261455, system: 1932171, idle: 5498166, iowait: 60405, irq: 0, softirq: 112596, steal: 284219 });
  });

  it('gives null for text without the line, or with too few or malformed counters', () => {
    expect(parseProcStatCpu('cpu0 1 2 3 4 5 6 7 8\n')).toBeNull();
    expect(parseProcStatCpu('cpu  1 2 3 4 5\n')).toBeNull();
    expect(parseProcStatCpu('cpu  1 2 3 x 5 6 7 8\n')).toBeNull();
    expect(parseProcStatCpu('')).toBeNull();
  });
});

describe('machineShares', () => {
  it('splits the ticks between two readings into steal, idle (with iowait) and busy', () => {
    const before = counters(100, 100, 10);
    const after = { ...counters(170, 120, 60, 30), iowait: 30 };
    // 70 user + 30 system busy, 20 idle + 30 iowait, 50 steal: 200 ticks.
    expect(machineShares(before, after)).toEqual({ steal: 0.25, idle: 0.25, busy: 0.5 });
  });

  it('gives null when a reading is missing, no tick passed, or a counter went back', () => {
    expect(machineShares(null, counters(1, 1, 1))).toBeNull();
    expect(machineShares(counters(5, 5, 5), counters(5, 5, 5))).toBeNull();
    expect(machineShares(counters(5, 5, 5), counters(9, 9, 4))).toBeNull();
  });
});

describe('withMachineTime (a window, with its worst second)', () => {
  afterEach(() => vi.useRealTimers());

  it("returns the window's shares and the largest steal of any second read inside it", async () => {
    vi.useFakeTimers();
    // Three seconds of 200 ticks each: steal 0, then 100 (half the cores), then 20; the window's mean steal is 20 %.
    const readings = [counters(0, 0, 0), counters(100, 100, 0), counters(150, 150, 100), counters(240, 240, 120)];
    let next = 0;
    const read = () => readings[Math.min(next++, readings.length - 1)]!;
    const window = withMachineTime(
      () => new Promise<string>((resolve) => setTimeout(() => resolve('load done'), 2500)),
      { sampleMs: 1000, read },
    );
    await vi.advanceTimersByTimeAsync(2500);
    const { result, machine } = await window;
    expect(result).toBe('load done');
    expect(machine?.steal).toBeCloseTo(120 / 600);
    expect(machine?.peak_steal).toBeCloseTo(0.5);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops reading when the load fails, and lets the failure through', async () => {
    vi.useFakeTimers();
    const read = vi.fn(() => counters(0, 0, 0));
    await expect(withMachineTime(() => Promise.reject(new Error('load generator died')), { sampleMs: 1000, read })).rejects.toThrow('load generator died');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives no shares where the counters cannot be read', async () => {
    const { result, machine } = await withMachineTime(async () => 7, { sampleMs: 1000, read: () => null });
    expect(result).toBe(7);
    expect(machine).toBeNull();
  });
});

describe('disturbed windows', () => {
  const calm: Shares = { steal: 0.02, idle: 0.2, busy: 0.78, peak_steal: 0.05 };
  const steadySteal: Shares = { steal: 0.12, idle: 0.1, busy: 0.78, peak_steal: 0.2 };
  const oneBadSecond: Shares = { steal: 0.06, idle: 0.1, busy: 0.84, peak_steal: 0.48 };

  it('is disturbed by a tenth of the window on average, or by a third of one second', () => {
    expect(isDisturbed(calm)).toBe(false);
    expect(isDisturbed(steadySteal)).toBe(true);
    expect(isDisturbed(oneBadSecond)).toBe(true);
    expect(isDisturbed(null)).toBe(false);
  });

  it('takes the more disturbed of two windows for a ratio', () => {
    expect(worstOf(calm, oneBadSecond)).toBe(oneBadSecond);
    expect(worstOf(steadySteal, calm)).toBe(steadySteal);
    expect(worstOf(undefined, calm)).toBe(calm);
    expect(worstOf(null, undefined)).toBeNull();
  });

  it('prints the shares beside the window, and says when it measured the host', () => {
    expect(machineLine('the window', calm)).toBe('machine during the window: steal 2% (worst second 5%), idle 20% of all CPU time');
    expect(machineLine('the window', oneBadSecond)).toMatch(/steal 6% \(worst second 48%\).*DISTURBED.*run again/);
    expect(machineLine('the window', null)).toMatch(/unknown/);
    expect(stealCell(oneBadSecond)).toBe('6% / 48%');
    expect(stealCell(null)).toBe('-');
  });
});

describe('waitUntilIdle (the service done with what a load left it, before the bare route is measured again)', () => {
  const waitUntilIdle = (machineTime as unknown as {
    waitUntilIdle: (pids: number[], options: { read: (pid: number) => number | null; sleep: (ms: number) => Promise<void>; sampleMs?: number; timeoutMs?: number; ticksPerSecond?: number; maxCores?: number }) => Promise<boolean>;
  }).waitUntilIdle;
  /** Reads from a script of tick counts per process, one reading per call. */
  const scripted = (byPid: Record<number, number[]>) => {
    const calls: Record<number, number> = {};
    return (pid: number) => {
      const i = (calls[pid] = (calls[pid] ?? -1) + 1);
      const values = byPid[pid]!;
      return values[Math.min(i, values.length - 1)]!;
    };
  };
  const sleeps: number[] = [];
  const sleep = async (ms: number) => void sleeps.push(ms);
  afterEach(() => void (sleeps.length = 0));

  it('resolves once the processes together use less than the share of a core over a window', async () => {
    // 100 ticks a second; windows of 500 ms: 50 ticks is a whole core. Busy (40 + 10), then 1 + 0: idle.
    const read = scripted({ 1: [0, 40, 80, 81], 2: [0, 10, 20, 20] });
    expect(await waitUntilIdle([1, 2], { read, sleep, sampleMs: 500, ticksPerSecond: 100 })).toBe(true);
    expect(sleeps).toEqual([500, 500, 500]);
  });

  it('gives up after the timeout, saying the processes never went idle', async () => {
    let ticks = 0;
    expect(await waitUntilIdle([1], { read: () => (ticks += 50), sleep, sampleMs: 500, timeoutMs: 2000 })).toBe(false);
    expect(sleeps).toEqual([500, 500, 500, 500]);
  });

  it('resolves at once where a process cannot be read (not Linux, or the process ended)', async () => {
    expect(await waitUntilIdle([1], { read: () => null, sleep })).toBe(true);
    expect(sleeps).toEqual([]);
  });
});
