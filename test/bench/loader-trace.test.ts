import { describe, expect, it } from 'vitest';

/** A Chrome trace event, as much of it as the benchmark reads. */
type TraceEvent = { ph: string; name: string; pid: number; tid: number; ts?: number; dur?: number; tdur?: number; args?: { name?: string } };
type Differences = { median: number; p25: number; p75: number; min: number; max: number; cnv_cheaper: number; rounds: number };

// bench/loader-trace.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
const { scriptTaskTime, summarizeDifferences, roundOrder, formatLoaderTraceResults } = (await import(new URL('../../bench/loader-trace.mjs', import.meta.url).href)) as {
  scriptTaskTime: (events: TraceEvent[]) => { wall: number; cpu: number; tasks: number };
  summarizeDifferences: (differences: number[]) => Differences;
  roundOrder: <T>(variants: T[], round: number) => T[];
  formatLoaderTraceResults: (result: unknown) => string;
};

const main = { pid: 1, tid: 10 };
const other = { pid: 1, tid: 11 };
const task = (name: string, ts: number, dur: number, thread = main): TraceEvent => ({ ph: 'X', name, ts, dur, ...thread });
const js = (name: string, ts: number, dur: number, tdur?: number, thread = main): TraceEvent => ({ ph: 'X', name, ts, dur, ...(tdur === undefined ? {} : { tdur }), ...thread });

describe('scriptTaskTime (the main-thread time of the page script, from a trace)', () => {
  const events: TraceEvent[] = [
    { ph: 'M', name: 'thread_name', ...main, args: { name: 'CrRendererMain' } },
    { ph: 'M', name: 'thread_name', ...other, args: { name: 'Compositor' } },
    // A task that parses the page and evaluates the script, then calls back into it.
    task('RunTask', 1000, 5000),
    task('ParseHTML', 1050, 40),
    js('EvaluateScript', 1100, 2000, 1500),
    js('V8.CompileLazy', 1200, 500, 400), // inside the evaluation: already counted
    task('RunTask', 1500, 100), // a task nested in the outer one belongs to it
    js('FunctionCall', 4000, 1000, 800),
    // A task that runs no JavaScript does not count.
    task('RunTask', 10_000, 1000),
    // A promise callback: no thread time recorded, so its wall time stands in.
    task('ThreadControllerImpl::RunTask', 20_000, 2000),
    js('RunMicrotasks', 20_100, 400),
    // JavaScript on another thread is not the main thread's.
    task('RunTask', 1000, 9000, other),
    js('FunctionCall', 1100, 8000, 8000, other),
  ];

  it('sums the outermost JavaScript events of main-thread tasks: wall from dur, CPU from tdur', () => {
    const result = scriptTaskTime(events);
    expect(result.wall).toBeCloseTo(3.4);
    expect(result.cpu).toBeCloseTo(2.7);
    expect(result.tasks).toBe(2);
  });

  it('reads nothing from a trace without a renderer main thread', () => {
    expect(scriptTaskTime(events.filter((e) => e.ph !== 'M'))).toEqual({ wall: 0, cpu: 0, tasks: 0 });
  });
});

describe('summarizeDifferences (paired per-round differences, cnv minus the other script)', () => {
  it('gives the median, nearest-rank quartiles, extremes and the rounds where cnv was cheaper', () => {
    expect(summarizeDifferences([-3, -1, 2, -5, 0])).toEqual({ median: -1, p25: -3, p75: 0, min: -5, max: 2, cnv_cheaper: 3, rounds: 5 });
  });

  it('has no figures without rounds', () => {
    const none = summarizeDifferences([]);
    expect(none.median).toBeNaN();
    expect(none.min).toBeNaN();
    expect(none.cnv_cheaper).toBe(0);
    expect(none.rounds).toBe(0);
  });
});

describe('roundOrder (interleaving)', () => {
  it('rotates the scripts so each runs first, in the middle and last once every three rounds', () => {
    const orders = [0, 1, 2].map((round) => roundOrder(['cnv', 'plausible', 'segment'], round));
    expect(orders).toEqual([
      ['cnv', 'plausible', 'segment'],
      ['plausible', 'segment', 'cnv'],
      ['segment', 'cnv', 'plausible'],
    ]);
  });
});

describe('formatLoaderTraceResults', () => {
  const differences = { median: -20, p25: -30, p75: -5, min: -40, max: 6, cnv_cheaper: 12, rounds: 15 };
  const cost = (cpu: number, booted = 15) => ({
    cpu_ms: cpu, wall_ms: cpu * 2, tasks: 3, script_duration_ms: cpu / 2, requests: 2, wire_bytes: 2700, encodings: ['gzip'], full_boot: { booted, loads: 15 },
  });
  const result = {
    chromium: 'Chrome/156',
    cpu_throttle: 4,
    rounds: 15,
    warmup_rounds: 1,
    protocol: 'plain CDP',
    labels: { cnv: 'cnv dist/loader.js', plausible: 'Plausible tracker' },
    bytes: { cnv: { raw: 7653, gzip: 3583, brotli: 3252 }, plausible: { raw: 6167, gzip: 2624, brotli: 2312 } },
    segment_lazy_chunks: { files: [], raw: 0, gzip: 0, brotli: 0 },
    cost: { cnv: cost(30), plausible: cost(50, 14) },
    paired: { plausible: { cpu_ms: differences, wall_ms: differences } },
    targets: {
      cpu_below_plausible: { cnv_ms: 30, plausible_ms: 50, paired_median_ms: -20, cnv_cheaper_rounds: '12/15', met: false },
      gzip_gate: { target: '<= 3,584 B gzip (build gate)', value: 3583, met: true },
      gzip_target: { target: '<= 3,072 B gzip (target)', value: 3583, met: false },
    },
  };

  it('prints every script, the paired differences, a warning for loads that did not boot, and each target with its mark', () => {
    const text = formatLoaderTraceResults(result);
    expect(text).toMatch(/Plausible tracker\s+6,167\s+2,624\s+2,312\s+14\/15\s+50\.0/);
    expect(text).toMatch(/Plausible tracker.*\s2\.0\s+2,700 \(gzip\)/);
    expect(text).toMatch(/Plausible tracker\s+CPU\s+-20\.0\s+-30\.0 \.\. -5\.0\s+-40\.0 \.\. 6\.0\s+12\/15/);
    expect(text).toContain('warning: some loads did not show');
    expect(text).toContain("cnv CPU time below Plausible's: 30.0 vs 50.0 ms, paired median -20.0 ms, cnv cheaper in 12/15 rounds -> NOT MET");
    expect(text).toContain('cnv <= 3,584 B gzip (build gate): 3,583 B -> met');
    expect(text).toContain('cnv <= 3,072 B gzip (target): 3,583 B -> NOT MET');
  });
});
