/**
 * One service under test in its own Node process (a child of bench/run.mjs), so that what it costs is its own: the
 * CPU time it spends per request (process.cpuUsage over the load window), its resident memory under load, and, with
 * `--cpu-prof` in its execArgv, a CPU profile of exactly the service. Several of them on one PostgreSQL are the
 * `--instances=N` deployment. Driven by messages from the parent (see support/child.mjs):
 *   {type: 'start', env, setup}   starts the service with the benchmark's settings plus `env`; with `setup`, sets the
 *                                 site's domain and connects the Google Ads flow through the hosted handoffs
 *   {type: 'count', table}        rows of the site's table; {type: 'present', table, column, values}: how many values are there
 *   {type: 'sql', sql, params}    a read-only query of the benchmark's own checks (doubled deliveries)
 *   {type: 'usage-begin', profile?} / {type: 'usage-end'}  CPU time and RSS of this process over a load window; with
 *                                 `profile` (a file path), a CPU profile of the window (the inspector's sampling
 *                                 profiler, as `node --cpu-prof` writes them) is written there
 *   {type: 'stop'}                closes the service (and writes the CPU profile when one was asked for)
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { dirname } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { setSiteDomain, setUpWebhookFlow, startServiceUnderTest } from './service-under-test.mjs';

let sut = null;
let window = null;
let profiler = null;
let allocation = null;

async function startProfile() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return session;
}

/** BENCH_ALLOC_PROFILE=<file>: a sampling profile of what the window allocated (garbage included), for where the heap grows. */
async function startAllocationProfile() {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return session;
}

async function stopAllocationProfile(session, file) {
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  writeFileSync(file, JSON.stringify(profile));
}

async function stopProfile(session, file) {
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(profile));
}

/**
 * Statements the service ran (a transaction's BEGIN and COMMIT count as two): per request, a figure that does not
 * depend on what else the machine runs (it does on the batch sizes, which the load sets).
 */
const statements = { n: 0 };
function countStatements(db) {
  const query = db.query.bind(db);
  db.query = (sql, params) => {
    statements.n++;
    return query(sql, params);
  };
  const transaction = db.transaction.bind(db);
  db.transaction = (fn) => {
    statements.n += 2;
    return transaction((tx) => fn({ ...tx, query: (sql, params) => (statements.n++, tx.query(sql, params)) }));
  };
}

/**
 * Samples RSS every 100 ms during a load window: the peak is the figure (a single reading at the end may miss it).
 * Also the share of the window the HTTP thread's event loop was busy (the embedded store's PGlite runs on a worker
 * thread of its own, so the process's CPU can exceed one core while this stays under 100 %).
 */
function beginUsage() {
  const start = {
    cpu: process.cpuUsage(),
    at: performance.now(),
    rssPeak: process.memoryUsage.rss(),
    requests: 0,
    elu: performance.eventLoopUtilization(),
    statements: statements.n,
  };
  start.count = () => start.requests++;
  sut.service.app.server.on('request', start.count);
  start.atPeak = process.memoryUsage();
  start.timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss <= start.rssPeak) return;
    start.rssPeak = rss;
    start.atPeak = process.memoryUsage(); // what the HTTP thread's heap held then (the rest: PGlite's thread, native)
  }, 100);
  return start;
}

function endUsage(start) {
  clearInterval(start.timer);
  sut.service.app.server.off('request', start.count);
  const cpu = process.cpuUsage(start.cpu);
  const rss = process.memoryUsage.rss();
  return {
    pid: process.pid,
    requests: start.requests,
    cpu_user_us: cpu.user,
    cpu_system_us: cpu.system,
    wall_ms: performance.now() - start.at,
    rss_peak_mb: Math.max(start.rssPeak, rss) / 2 ** 20,
    rss_end_mb: rss / 2 ** 20,
    // At the peak: the HTTP thread's JavaScript heap and the memory outside it (buffers) that V8 knows of.
    heap_at_peak_mb: start.atPeak.heapTotal / 2 ** 20,
    external_at_peak_mb: start.atPeak.external / 2 ** 20,
    http_thread_busy: performance.eventLoopUtilization(start.elu).utilization,
    statements: statements.n - start.statements,
  };
}

/**
 * BENCH_SQL_TIMING=1: time every statement of the service by its first words (a diagnostic for the profile's
 * "where does the database time go"; the wrapper itself costs a little, so figures of such a run are not reported).
 */
const sqlTimes = new Map();
function noteSqlTime(key, ms) {
  const each = sqlTimes.get(key) ?? [];
  each.push(ms);
  sqlTimes.set(key, each);
}
function timeStatements(db) {
  const timed = (query) => async (sql, params) => {
    const started = performance.now();
    try {
      return await query(sql, params);
    } finally {
      noteSqlTime(sql.replace(/\s+/g, ' ').trim().slice(0, 90), performance.now() - started);
    }
  };
  db.query = timed(db.query.bind(db));
  const transaction = db.transaction.bind(db);
  db.transaction = (fn) => {
    const started = performance.now();
    return transaction((tx) => fn({ ...tx, query: timed(tx.query.bind(tx)) })).finally(() => {
      noteSqlTime('(transaction, whole)', performance.now() - started);
    });
  };
}

/**
 * BENCH_TAIL=1: where the webhook's tail comes from (a diagnostic, like BENCH_SQL_TIMING): the HTTP thread's GC pauses
 * and event-loop delay over the window, and the wall time of every transaction, so a slow answer can be told apart
 * as a pause of the thread, a slow transaction or a wait for the store.
 */
const tail = { on: process.env.BENCH_TAIL === '1', gc: [], tx: [], byFirst: {}, delay: null };
if (tail.on) new PerformanceObserver((list) => tail.gc.push(...list.getEntries().map((e) => e.duration))).observe({ entryTypes: ['gc'] });
function timeTransactions(db) {
  const transaction = db.transaction.bind(db);
  db.transaction = (fn) => {
    // From the moment the transaction holds the connection (its function runs) to its end: a wait for the store
    // before it is not counted here.
    let started = 0;
    let first = null;
    return transaction((tx) => {
      started = performance.now();
      return fn({ ...tx, query: (sql, params) => ((first ??= sql.replace(/\s+/g, ' ').trim().slice(0, 40)), tx.query(sql, params)) });
    }).finally(() => {
      const ms = performance.now() - started;
      tail.tx.push(ms);
      (tail.byFirst[first] ??= []).push(ms);
    });
  };
}
function quantiles(values) {
  const v = [...values].sort((a, b) => a - b);
  const q = (p) => (v.length ? Math.round(v[Math.min(v.length - 1, Math.floor(p * v.length))] * 10) / 10 : null);
  return { n: v.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: v.length ? Math.round(v[v.length - 1] * 10) / 10 : null, over_20ms_total_ms: Math.round(v.filter((x) => x > 20).reduce((a, b) => a + b, 0)) };
}

async function handle(message) {
  switch (message.type) {
    case 'start': {
      sut = await startServiceUnderTest(message.env ?? {}, { bootstrapped: !message.setup });
      if (process.env.BENCH_SQL_TIMING === '1') timeStatements(sut.service.db);
      countStatements(sut.service.db);
      if (tail.on) timeTransactions(sut.service.db);
      let secret = null;
      if (message.setup) {
        await setSiteDomain(sut);
        secret = (await setUpWebhookFlow(sut)).secret;
      }
      return { base: sut.base, site: sut.site, secret, pid: process.pid, store: sut.service.db.kind };
    }
    case 'count':
      return sut.countRows(message.table);
    case 'present':
      return sut.countPresent(message.table, message.column, message.values);
    case 'sql':
      return sut.service.db.query(message.sql, message.params ?? []);
    case 'usage-begin':
      sqlTimes.clear();
      if (process.env.BENCH_ALLOC_PROFILE) allocation = await startAllocationProfile();
      if (tail.on) {
        tail.gc = [];
        tail.tx = [];
        tail.byFirst = {};
        tail.delay = monitorEventLoopDelay({ resolution: 5 });
        tail.delay.enable();
      }
      if (message.profile) profiler = { session: await startProfile(), file: message.profile };
      window = beginUsage();
      return null;
    case 'usage-end': {
      const usage = endUsage(window);
      window = null;
      if (allocation) {
        await stopAllocationProfile(allocation, process.env.BENCH_ALLOC_PROFILE);
        allocation = null;
      }
      if (tail.on) {
        tail.delay.disable();
        const ms = (ns) => Math.round(ns / 1e5) / 10;
        usage.tail = {
          gc_ms: quantiles(tail.gc),
          event_loop_delay_ms: { p50: ms(tail.delay.percentile(50)), p99: ms(tail.delay.percentile(99)), max: ms(tail.delay.max) },
          transaction_ms: quantiles(tail.tx),
          by_first_statement: Object.fromEntries(Object.entries(tail.byFirst).map(([k, v]) => [k, quantiles(v)])),
        };
        console.log(`[tail] ${JSON.stringify(usage.tail)}`);
      }
      if (sqlTimes.size > 0) {
        const total = (each) => each.reduce((a, b) => a + b, 0);
        usage.sql = [...sqlTimes].map(([sql, each]) => ({ sql, each, ms: total(each) })).sort((a, b) => b.ms - a.ms).slice(0, 25).map(({ sql, each, ms }) => {
          const { n, p50, p99, max } = quantiles(each);
          return { sql, n, ms: Math.round(ms), p50_ms: p50, p99_ms: p99, max_ms: max };
        });
      }
      if (profiler) {
        await stopProfile(profiler.session, profiler.file);
        usage.profile = profiler.file;
        profiler = null;
      }
      return usage;
    }
    case 'stop':
      await sut?.close();
      sut = null;
      return null;
    default:
      throw new Error(`unknown message type ${message.type}`);
  }
}

process.on('message', async (message) => {
  try {
    process.send({ id: message.id, result: await handle(message) });
  } catch (error) {
    process.send({ id: message.id, error: String(error?.stack ?? error) });
  }
});
process.on('SIGTERM', async () => {
  // A normal exit, so that --cpu-prof writes its profile.
  await sut?.close().catch(() => undefined);
  process.exit(0);
});
process.send({ ready: true });
// Not used by the parent, but keeps a stray temp directory from an aborted start out of the way.
process.on('exit', () => sut?.dataDir && rmSync(sut.dataDir, { recursive: true, force: true }));
