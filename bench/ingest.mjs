/**
 * Snapshot ingest benchmark (issue 3): POST /collect/v1/sites/{key}/snapshots on the real service (embedded PGlite)
 * beside a bare Fastify route answering 204, both driven by the same load generator with the same request bytes.
 * Afterwards the database is asked how many snapshots it holds, against the 204s the load generator counted.
 */
import { importTs } from './support/ts-module.mjs';
import { ratio, sumOf } from './support/stats.mjs';
import { formatTable, mark, num, times } from './support/table.mjs';
import { BARE_PATH } from './bare-route.mjs';
import { SITE_ORIGIN } from './service-under-test.mjs';
import { measureSteadily, summariseAttempts, withSteadyUsage } from './usage.mjs';
import { formatShares, isDisturbed, machineLine, withMachineTime, worstOf } from './support/machine-time.mjs';

/** The targets of issue 3. */
export const INGEST_TARGETS = { perSecond: 5000, p99Ms: 50, ofBare: 0.35 };

/** Runs the load generator on the bare route: the baseline every server benchmark is compared with. */
export async function measureBareRoute({ loadgen, bare, connections, duration, warmup }) {
  const job = { kind: 'bare', url: bare.url, path: BARE_PATH, origin: SITE_ORIGIN, connections };
  await loadgen.call({ ...job, duration: warmup });
  // The bare app runs in this process, which does nothing else meanwhile but wait on the load generator: its CPU time
  // over the run, per request, is the bare route's cost beside the service's (the ratio of costs, unlike the ratio
  // of throughputs, barely moves when other processes take the cores).
  const once = async () => {
    const cpu = process.cpuUsage();
    const { result, machine } = await withMachineTime(() => loadgen.call({ ...job, duration }));
    const used = process.cpuUsage(cpu);
    return { ...result, cpu_us_per_request: (used.user + used.system) / Math.max(1, result.requests_total), machine };
  };
  // Measured again when the machine disturbed it, like the service's windows (usage.mjs).
  const { kept, attempts } = await measureSteadily(once, (r) => r.machine);
  return { ...kept, attempts: summariseAttempts(attempts, kept, (r) => r, (r) => r.machine) };
}

/**
 * The bare route's figure for a service window measured between two bare windows, one just before it and one after
 * it (once the service is idle again): their mean rate and CPU per request. On this shared machine the bare route's
 * rate moved by a third within minutes while the service's own stayed within a tenth (2026-11-28: 18,103/s, then
 * 11,563/s five minutes later; the service 6,232 and 6,821/s), so one bare window taken before both of a store's
 * sections and a minute or two before the second measured the hour more than the service. The two windows and their
 * mean are all printed. Without an after window, the before window as it is.
 */
export function bracketBare(before, after) {
  if (!after) return before;
  const mean = (of) => (of(before) + of(after)) / 2;
  return {
    requests_per_s: mean((w) => w.requests_per_s),
    cpu_us_per_request: before.cpu_us_per_request && after.cpu_us_per_request ? mean((w) => w.cpu_us_per_request) : null,
    machine: worstOf(before.machine, after.machine),
    windows: { before, after },
  };
}

/** The bare route's rows of a throughput table: its window, or the windows before and after the service's. */
export function bareRows(bare) {
  if (!bare.windows) return [throughputRow('bare Fastify route (204)', bare)];
  return [throughputRow('bare Fastify route (204), before', bare.windows.before), throughputRow('bare Fastify route (204), after', bare.windows.after)];
}

/**
 * The ratio line of a section: the service's rate over the bare route's (the mean of both windows when bracketed), and
 * a warning when the window after began with the service still busy (it stayed above waitUntilIdle's share of a core
 * for the whole wait): that bare window was slowed by the service, and the ratio flatters it.
 */
export function ratioLine(r) {
  const b = r.bare;
  if (!b.windows) return `service / bare: ${times(r.ratio_to_bare)}`;
  const { before, after } = b.windows;
  return (
    `service / bare: ${times(r.ratio_to_bare)} (of the mean of the bare route's windows before and after, ${num(before.requests_per_s)} and ${num(after.requests_per_s)}/s)` +
    (after.service_busy ? "; the service was still busy when the window after began, so that window was slowed and the ratio flatters the service" : '')
  );
}

/** bare µs per request / service µs per request: the throughput ratio the costs predict for a CPU-bound service. */
export function costRatio(bare, usage) {
  return usage?.cpu_us_per_request && bare.cpu_us_per_request ? bare.cpu_us_per_request / usage.cpu_us_per_request : null;
}

/** Polls `read` until it returns `expected` or stops changing for `quietMs`; returns the last value. */
export async function settleCount(read, expected, { quietMs = 1000, timeoutMs = 15_000 } = {}) {
  const start = Date.now();
  let last = await read();
  let changedAt = Date.now();
  while (last !== expected && Date.now() - changedAt < quietMs && Date.now() - start < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const value = await read();
    if (value !== last) changedAt = Date.now();
    last = value;
  }
  return last;
}

/** Runs the ingest benchmark against a started service whose site accepts SITE_ORIGIN. */
export async function runIngestBenchmark({ sut, loadgen, bareResult, bareAfter, connections, duration, warmup }) {
  const { snapshotsPath } = await importTs('src/protocol/collector.ts');
  const job = { kind: 'snapshots', url: sut.urls ?? sut.base, path: snapshotsPath(sut.site.site_key), origin: SITE_ORIGIN, connections, returnIds: true };
  const warm = await loadgen.call({ ...job, duration: warmup });
  const { result: main, usage, results, attempts } = await withSteadyUsage(sut, 'ingest', () => loadgen.call({ ...job, duration }));
  // Every run counts in the accounting: the warm-up, and each attempt at the window (measured again when disturbed).
  const runs = [warm, ...results];
  const answered = runs.flatMap((r) => r.answered_ids);
  const answered204 = answered.length;
  // Every token answered 204 must be in the table (the service commits before it answers, so no wait is needed).
  const stored = await sut.countPresent('snapshots', 'correlation_token', answered);
  for (const r of runs) delete r.answered_ids;
  const bare = bracketBare(bareResult, await bareAfter?.());
  const ofBare = ratio(main.requests_per_s, bare.requests_per_s);
  return {
    endpoint: `POST ${job.path}`,
    store: sut.label ?? 'embedded PGlite',
    instances: sut.instances ?? 1,
    service: main,
    usage,
    attempts,
    bare,
    ratio_to_bare: ofBare,
    accounting: {
      answered_204: answered204,
      non_204: sumOf(runs, (r) => r.requests_total - (r.status_counts['204'] ?? 0)),
      stored,
      lost: answered204 - stored,
      connection_errors: sumOf(runs, (r) => r.errors),
    },
    targets: {
      per_second: { target: `>= ${num(INGEST_TARGETS.perSecond)} snapshots/s`, value: main.requests_per_s, met: main.requests_per_s >= INGEST_TARGETS.perSecond },
      p99: { target: `p99 < ${INGEST_TARGETS.p99Ms} ms`, value: main.latency_ms.p99, met: main.latency_ms.p99 < INGEST_TARGETS.p99Ms },
      of_bare: { target: `>= ${INGEST_TARGETS.ofBare} of the bare route`, value: ofBare, met: ofBare !== null && ofBare >= INGEST_TARGETS.ofBare },
      nothing_lost: { target: 'every snapshot answered 204 is stored', value: answered204 - stored, met: answered204 === stored },
    },
  };
}

/**
 * Lines on a window measured more than once because the machine disturbed it: each attempt's figures and steal, and
 * which one the figures above come from.
 */
export function formatAttempts(what, attempts) {
  if (!attempts?.length) return [];
  return [
    `${what}: measured ${attempts.length} times, the hypervisor having taken the cores from ${attempts.filter((a) => isDisturbed(a.machine)).length} of them; the least disturbed is kept:`,
    ...attempts.map((a, i) =>
      `  attempt ${i + 1}: ${num(a.requests_per_s)}/s, p99 ${num(a.p99_ms, 1)} ms, ${formatShares(a.machine) ?? 'machine unknown'}` +
        `${isDisturbed(a.machine) ? ', disturbed' : ''}${a.kept ? '  <- kept' : ''}`),
  ];
}

/** One row of a throughput table. */
export function throughputRow(label, r) {
  const codes = Object.entries(r.status_counts).map(([code, n]) => `${code}:${n}`).join(' ');
  return [label, num(r.requests_per_s), num(r.latency_ms.p50, 1), num(r.latency_ms.p99, 1), num(r.latency_ms.max, 0), num(r.requests_total), codes || '-', num(r.errors)];
}

/** The header of a throughput table. */
export const THROUGHPUT_HEADER = ['target', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'requests', 'status codes', 'conn errors'];

/** `embedded PGlite`, or `PostgreSQL, 3 instances`. */
export function storeTitle(r) {
  return r.instances > 1 ? `${r.store}, ${r.instances} instances` : r.store;
}

/** The RSS memory target of the embedded store (the whole service process, PGlite's memory included). */
export const RSS_TARGET_MB = 300;

/** Lines on the service processes' CPU time per request and memory over the load window. */
export function formatUsage(usage, bare) {
  if (!usage) return [];
  const lines = [
    `service process: ${num(usage.cpu_us_per_request)} µs CPU per request (~${num(1e6 / usage.cpu_us_per_request)} requests per core-second), ` +
      `RSS peak ${num(usage.rss_peak_mb)} MB` +
      (usage.heap_at_peak_mb === undefined ? '' : ` (of which the HTTP thread's JS heap ${num(usage.heap_at_peak_mb)} MB, buffers ${num(usage.external_at_peak_mb)} MB)`) +
      (bare?.cpu_us_per_request ? `; bare route ${num(bare.cpu_us_per_request)} µs, cost ratio ${times(costRatio(bare, usage))}` : ''),
    `service threads: ${(usage.cpu_cores ?? 0).toFixed(2)} cores busy in all, the HTTP thread's event loop ${num((usage.http_thread_busy ?? 0) * 100)}% busy; ` +
      `${(usage.statements_per_request ?? 0).toFixed(2)} SQL statements per request (BEGIN and COMMIT included)`,
  ];
  if ('machine' in usage) lines.push(machineLine("the service's window", usage.machine));
  for (const [which, window] of bare?.windows ? [[' before', bare.windows.before], [' after', bare.windows.after]] : [['', bare]]) {
    if (window && 'machine' in window) lines.push(machineLine(`the bare route's window${which}`, window.machine));
    lines.push(...formatAttempts(`the bare route${which}`, window?.attempts));
  }
  for (const file of usage.profiles ?? []) lines.push(`CPU profile of the load window: ${file}`);
  if (usage.sql) {
    lines.push('statements of the first instance over the window (BENCH_SQL_TIMING=1; wall time, overlapping on PostgreSQL):');
    for (const s of usage.sql) lines.push(`  ${num(s.ms).padStart(7)} ms  ${num(s.n).padStart(6)} x  p50 ${String(s.p50_ms).padStart(5)}  p99 ${String(s.p99_ms).padStart(5)}  max ${String(s.max_ms).padStart(5)} ms  ${s.sql}`);
  }
  if (usage.instances.length > 1) {
    lines.push(formatTable(
      ['instance (pid)', 'requests', 'req/s', 'µs CPU/request', 'CPU share', 'RSS peak MB'],
      usage.instances.map((i) => [String(i.pid), num(i.requests), num(i.requests_per_s), num(i.cpu_us_per_request), `${num(i.cpu_share * 100)}%`, num(i.rss_peak_mb)]),
    ));
  }
  return lines;
}

/** The ingest benchmark's tables as text. */
export function formatIngestResults(r) {
  const t = r.targets;
  const a = r.accounting;
  return [
    `== Snapshot ingest, ${storeTitle(r)} (${r.service.connections} connections, no pipelining, ${num(r.service.duration_s)} s) ==`,
    formatTable(THROUGHPUT_HEADER, [throughputRow(`service ${r.endpoint.replace(/sites\/[^/]+/, 'sites/KEY')}`, r.service), ...bareRows(r.bare)]),
    ratioLine(r),
    ...formatUsage(r.usage, r.bare),
    ...formatAttempts("the service's window", r.attempts),
    `accounting (warm-up and every attempt included): ${num(a.answered_204)} answered 204, ${num(a.stored)} of those tokens stored, ${num(a.lost)} lost, ${num(a.non_204)} other answers, ${num(a.connection_errors)} connection errors`,
    '',
    `target  ${t.per_second.target}: ${num(t.per_second.value)} -> ${mark(t.per_second.met)}`,
    `target  ${t.p99.target}: ${num(t.p99.value, 1)} ms -> ${mark(t.p99.met)}`,
    `target  ${t.of_bare.target}: ${times(t.of_bare.value)} -> ${mark(t.of_bare.met)}`,
    `check   ${t.nothing_lost.target}: ${num(a.answered_204)} answered, ${num(a.stored)} of them found -> ${mark(t.nothing_lost.met)}`,
  ].join('\n');
}
