import { describe, expect, it } from 'vitest';

type Shares = { steal: number; idle: number; busy: number; peak_steal: number };
type Attempt = { n: number; requests_per_s: number; latency_ms: { p99: number }; machine: Shares | null };

// bench/usage.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
const { measureSteadily, summariseAttempts } = (await import(new URL('../../bench/usage.mjs', import.meta.url).href)) as {
  measureSteadily: (measure: () => Promise<Attempt>, machineOf: (a: Attempt) => Shares | null, retries?: number, beforeRetry?: () => Promise<void>) => Promise<{ kept: Attempt; attempts: Attempt[] }>;
  summariseAttempts: (attempts: Attempt[], kept: Attempt, resultOf: (a: Attempt) => Attempt, machineOf: (a: Attempt) => Shares | null) => { requests_per_s: number; p99_ms: number; machine: Shares | null; kept: boolean }[];
};

const calm = (steal = 0.02): Shares => ({ steal, idle: 0.2, busy: 0.78, peak_steal: steal * 2 });
const stolen = (steal: number): Shares => ({ steal, idle: 0.2, busy: 0.8 - steal, peak_steal: Math.min(1, steal * 1.5) });

/** A window that reports the given machines in turn, with figures that get better as the list goes on. */
function windows(machines: (Shares | null)[]) {
  let n = 0;
  return {
    measure: async (): Promise<Attempt> => {
      const machine = machines[n] ?? null;
      n++;
      return { n, requests_per_s: 1000 * n, latency_ms: { p99: 100 / n }, machine };
    },
    count: () => n,
  };
}

describe('measureSteadily (a load window measured again while the hypervisor took the cores)', () => {
  it('measures a calm window once', async () => {
    const w = windows([calm()]);
    const { kept, attempts } = await measureSteadily(w.measure, (a) => a.machine, 2);
    expect(w.count()).toBe(1);
    expect(attempts).toHaveLength(1);
    expect(kept.n).toBe(1);
  });

  it('measures a disturbed window again until one is calm, and keeps the calm one', async () => {
    const w = windows([stolen(0.44), calm(0.03), stolen(0.3)]);
    const { kept, attempts } = await measureSteadily(w.measure, (a) => a.machine, 2);
    expect(w.count()).toBe(2);
    expect(attempts.map((a) => a.n)).toEqual([1, 2]);
    expect(kept.n).toBe(2);
  });

  it('stops after the allowed retries and keeps the least disturbed attempt, not the one with the best figures', async () => {
    // The third attempt has the best figures (3,000/s) but more steal than the second.
    const w = windows([stolen(0.44), stolen(0.12), stolen(0.27), calm()]);
    const { kept, attempts } = await measureSteadily(w.measure, (a) => a.machine, 2);
    expect(w.count()).toBe(3);
    expect(attempts).toHaveLength(3);
    expect(kept.n).toBe(2);
  });

  it('brings the service back before each retry, and only then (a burst leaves its events to build)', async () => {
    const w = windows([stolen(0.44), stolen(0.3), calm()]);
    const order: string[] = [];
    const measure = async () => {
      const attempt = await w.measure();
      order.push(`attempt ${attempt.n}`);
      return attempt;
    };
    await measureSteadily(measure, (a) => a.machine, 2, async () => void order.push('settled'));
    expect(order).toEqual(['attempt 1', 'settled', 'attempt 2', 'settled', 'attempt 3']);
    const once = windows([calm()]);
    let settled = 0;
    await measureSteadily(once.measure, (a) => a.machine, 2, async () => void settled++);
    expect(settled).toBe(0);
  });

  it('measures once with no retries allowed, and once where the machine cannot be read', async () => {
    const disturbedOnly = windows([stolen(0.5), calm()]);
    expect((await measureSteadily(disturbedOnly.measure, (a) => a.machine, 0)).attempts).toHaveLength(1);
    const unknown = windows([null, calm()]);
    const { kept, attempts } = await measureSteadily(unknown.measure, (a) => a.machine, 2);
    expect(attempts).toHaveLength(1);
    expect(kept.machine).toBeNull();
  });

  it('summarises each attempt for the report only when there was more than one', async () => {
    const once = await measureSteadily(windows([calm()]).measure, (a) => a.machine, 2);
    expect(summariseAttempts(once.attempts, once.kept, (a) => a, (a) => a.machine)).toEqual([]);
    const twice = await measureSteadily(windows([stolen(0.44), calm(0.03)]).measure, (a) => a.machine, 2);
    expect(summariseAttempts(twice.attempts, twice.kept, (a) => a, (a) => a.machine)).toEqual([
      { requests_per_s: 1000, p99_ms: 100, machine: stolen(0.44), kept: false },
      { requests_per_s: 2000, p99_ms: 50, machine: calm(0.03), kept: true },
    ]);
  });
});
