/**
 * The loader benchmark (issue 2, made fair by issue 10): bytes and main-thread time of our loader beside Plausible's
 * tracker and Segment's analytics.js, the time measured from a Chromium trace. It is the `loader` section of
 * `npm run bench` (bench/run.mjs) and runs standalone too.
 *
 * Fair how:
 * - Chromium is launched with --disable-blink-features=AutomationControlled (navigator.webdriver false: Plausible sends
 *   nothing otherwise), and every load checks that the script really booted: Plausible's pageview and Segment's page()
 *   call arrived; ours, loaded as the install snippet loads it (`/loader.js?site_key=KEY`, the config inside, no
 *   request at boot), wrote its ad touch cookie.
 * - Every script is served compressed by the browser's Accept-Encoding, and each page view's requests and bytes on the
 *   wire are counted by the server.
 * - Chromium is driven over a plain CDP pipe with only the Page, Emulation, Performance and Tracing domains: Playwright
 *   enables Runtime and Network, which make every fetch capture a stack and re-parse the script, a cost no visitor pays.
 * - The figure is the main-thread time, wall (`dur`) and CPU (`tdur`), that the trace's tasks spend running the script's
 *   code: evaluation, event and timer callbacks, promise callbacks after the config or fetch resolves, and lazy
 *   compiles (each page holds no code but the script under test; Segment's page also holds Segment's own snippet).
 *   ScriptDuration (Performance.getMetrics) is printed beside it: it misses the work done after the config arrives.
 * - At least 15 rounds after one unmeasured warm-up round, interleaved (each round loads every script, the order
 *   rotating from round to round), 4x CPU throttle, a fresh browser context per load. Medians, and the paired per-round
 *   differences (cnv minus the other script in the same round) with their spread.
 *
 * Usage: node build.mjs --loader-only && node bench/loader-trace.mjs   (BENCH_LOADS=15 rounds, at least 15)
 *        node bench/run.mjs --only=loader                             (the same, inside the benchmark run)
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { LOADER_GZIP_BUDGET, LOADER_GZIP_TARGET, measure as measureBytes } from '../build.mjs';
import { cnvLoaderCode, packageVersion, plausibleTrackerCode, segmentChunkSizes, segmentStandaloneCode } from './loader-scripts.mjs';
import { cnvSiteConfig, HOSTS, startLoaderServer } from './loader-server.mjs';
import { median, percentile } from './support/stats.mjs';
import { formatTable, mark, num } from './support/table.mjs';
import { importTs } from './support/ts-module.mjs';

/** The issue's minimum of measured rounds: fewer asked for are raised to it. */
export const MIN_ROUNDS = 15;
const CPU_THROTTLE = 4;
const QUIET_MS = 500;
/** How long a load may take to show its script's own request before it is measured anyway (and counted as not booted). */
const BOOT_TIMEOUT_MS = 10_000;
const VARIANTS = ['cnv', 'plausible', 'segment'];
/** The scripts cnv is compared with, paired round by round. */
const OTHERS = ['plausible', 'segment'];
const SCRIPTS = {
  // The install snippet's loader has the config inside: it sends nothing at boot; its ad touch cookie shows it ran.
  cnv: { label: 'cnv /loader.js?site_key= (config inside)', name: 'cnv', bootCookie: true },
  plausible: { label: `Plausible tracker ${packageVersion('@plausible-analytics/tracker')}`, name: 'Plausible', bootPath: '/api/event' },
  segment: { label: `Segment analytics-next ${packageVersion('@segment/analytics-next')}`, name: 'Segment', bootPath: '/v1/p' },
};
const TRACE_CATEGORIES = [
  'toplevel',
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'v8',
  'v8.execute',
  'disabled-by-default-v8.compile',
  '__metadata',
];
const TASK_NAMES = new Set(['RunTask', 'ThreadControllerImpl::RunTask']);

/** A minimal CDP client over Chromium's --remote-debugging-pipe (NUL-separated JSON on fds 3 and 4). */
function cdpOverPipe(child) {
  const [, , , toBrowser, fromBrowser] = child.stdio;
  let nextId = 0;
  const pending = new Map();
  const listeners = new Set();
  let buffer = '';
  // A browser that exits (or crashes) fails what is still waiting, instead of leaving the benchmark hanging.
  const failAll = (why) => {
    for (const { reject, method } of pending.values()) reject(new Error(`${method}: ${why}`));
    pending.clear();
  };
  child.on('exit', (code, signal) => failAll(`Chromium exited (${signal ?? code})`));
  child.on('error', (error) => failAll(`Chromium could not start (${error.message})`));
  toBrowser.on('error', (error) => failAll(`pipe to Chromium: ${error.message}`));
  fromBrowser.on('error', (error) => failAll(`pipe from Chromium: ${error.message}`));
  fromBrowser.on('data', (chunk) => {
    buffer += chunk.toString('utf8');
    let end;
    while ((end = buffer.indexOf('\0')) >= 0) {
      const message = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (message.id !== undefined && pending.has(message.id)) {
        const { resolve, reject, method } = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result);
      } else for (const listener of listeners) listener(message);
    }
  });
  return {
    send(method, params = {}, sessionId) {
      const id = ++nextId;
      toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
    },
    /** Resolves with the first event `method` of the session that satisfies `predicate`. */
    once(method, sessionId, predicate = () => true) {
      return new Promise((resolve) => {
        const listener = (message) => {
          if (message.method === method && message.sessionId === sessionId && predicate(message.params)) {
            listeners.delete(listener);
            resolve(message.params);
          }
        };
        listeners.add(listener);
      });
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

async function launch() {
  const { CHROMIUM_ARGS, chromiumExecutable } = await importTs('e2e/support/chromium.ts');
  const executable = chromiumExecutable() ?? (await import('@playwright/test')).chromium.executablePath();
  const args = [...CHROMIUM_ARGS, '--headless=new', '--disable-blink-features=AutomationControlled', '--remote-debugging-pipe', 'about:blank'];
  const child = spawn(executable, args, { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const cdp = cdpOverPipe(child);
  const { product } = await cdp.send('Browser.getVersion').catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  /** Asks Chromium to close (so it ends its own renderers), and kills it if it has not exited within 5 s. */
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    cdp.send('Browser.close').catch(() => {});
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return { cdp, product, executable, close };
}

/** Trace events that mean V8 runs (or compiles to run) JavaScript inside a task. */
const JS_EVENTS = new Set(['EvaluateScript', 'FunctionCall', 'TimerFire', 'v8.run', 'v8.callFunction', 'v8.compile', 'V8.CompileCode', 'V8.CompileLazy', 'RunMicrotasks']);

/**
 * The main-thread time of a page's script: in the tasks of a renderer main thread, the time V8 spends running
 * JavaScript (script evaluation and compile, callbacks of events, timers and promises, lazy compiles inside them). The
 * benchmark pages carry no code but the one script under test, so all of it is that script's, including promise
 * callbacks, whose trace events name no URL. Wall (`dur`) and CPU (`tdur`) in milliseconds, and how many tasks ran it.
 */
export function scriptTaskTime(events) {
  const mains = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const byThread = new Map();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (!mains.has(key) || e.ph !== 'X') continue;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  let wall = 0;
  let cpu = 0;
  let tasks = 0;
  for (const list of byThread.values()) {
    list.sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
    let outerEnd = -1;
    for (const task of list) {
      if (!TASK_NAMES.has(task.name) || task.ts < outerEnd) continue; // nested tasks belong to the outer one
      const end = task.ts + (task.dur ?? 0);
      outerEnd = end;
      // The JavaScript of the task, outermost events only (a lazy compile inside a call is the call's): a deferred
      // script runs inside the task that parses the page, whose parsing is not the script's cost.
      let jsEnd = -1;
      let ran = false;
      for (const e of list) {
        if (e.ts < task.ts || e.ts > end || !JS_EVENTS.has(e.name) || e.ts < jsEnd) continue;
        jsEnd = e.ts + (e.dur ?? 0);
        wall += (e.dur ?? 0) / 1000;
        cpu += (e.tdur ?? e.dur ?? 0) / 1000;
        ran = true;
      }
      if (ran) tasks++;
    }
  }
  return { wall, cpu, tasks };
}

/**
 * The spread of paired differences (one per round): median, quartiles (nearest rank), extremes, and in how many rounds
 * the difference was negative (cnv cheaper). NaN figures and 0 counts when there are none.
 */
export function summarizeDifferences(differences) {
  return {
    median: median(differences),
    p25: percentile(differences, 25),
    p75: percentile(differences, 75),
    min: differences.length ? Math.min(...differences) : Number.NaN,
    max: differences.length ? Math.max(...differences) : Number.NaN,
    cnv_cheaper: differences.filter((d) => d < 0).length,
    rounds: differences.length,
  };
}

/** The order of the scripts in a round: rotated each round, so no script always runs first or last. */
export function roundOrder(variants, round) {
  return variants.map((_, i) => variants[(i + round) % variants.length]);
}

/**
 * One load of a variant in a fresh browser context, traced; its figures, whether the script fully booted (its own
 * request arrived, or for cnv its ad touch cookie `clickCookie` was written), and what the page view cost on the wire.
 */
async function traceLoad(cdp, server, variant, clickCookie) {
  const { browserContextId } = await cdp.send('Target.createBrowserContext');
  try {
    const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank', browserContextId });
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
    const send = (method, params) => cdp.send(method, params, sessionId);
    await send('Page.enable');
    await send('Performance.enable', { timeDomain: 'threadTicks' });
    await send('Emulation.setCPUThrottlingRate', { rate: CPU_THROTTLE });
    const events = [];
    const stop = cdp.on((m) => m.sessionId === sessionId && m.method === 'Tracing.dataCollected' && events.push(...m.params.value));
    await send('Tracing.start', { traceConfig: { includedCategories: TRACE_CATEGORIES }, transferMode: 'ReportEvents' });
    const { bootPath, bootCookie } = SCRIPTS[variant];
    const before = bootPath ? server.hits(bootPath) : 0;
    let cookieSeen = false;
    const checkCookie = async () => {
      const { cookies } = await cdp.send('Storage.getCookies', { browserContextId });
      cookieSeen = cookies.some((c) => c.name === clickCookie);
    };
    const booted = () => (bootCookie ? cookieSeen : server.hits(bootPath) > before);
    server.takeWire();
    const loaded = cdp.once('Page.loadEventFired', sessionId);
    await send('Page.navigate', { url: server.pageUrl(variant) });
    await loaded;
    // On a busy machine a throttled page can pause longer than QUIET_MS between its requests: wait for the boot itself.
    const deadline = Date.now() + BOOT_TIMEOUT_MS;
    while (!booted() && Date.now() < deadline) {
      if (bootCookie) await checkCookie();
      if (!booted()) await new Promise((r) => setTimeout(r, 25));
    }
    const fullBoot = booted();
    await server.waitForQuiet(QUIET_MS);
    const wire = server.takeWire();
    const { metrics } = await send('Performance.getMetrics');
    const complete = cdp.once('Tracing.tracingComplete', sessionId);
    await send('Tracing.end');
    await complete;
    stop();
    const scriptDuration = (metrics.find((m) => m.name === 'ScriptDuration')?.value ?? NaN) * 1000;
    return { ...scriptTaskTime(events), scriptDuration, booted: fullBoot, requests: wire.requests, wireBytes: wire.bytes, encodings: wire.encodings };
  } finally {
    await cdp.send('Target.disposeBrowserContext', { browserContextId });
  }
}

const round1 = (value) => (Number.isFinite(value) ? Math.round(value * 10) / 10 : null);

/**
 * Runs the fair loader benchmark: `rounds` measured rounds (raised to MIN_ROUNDS) after one warm-up round, each
 * loading every script once. Returns bytes, medians, paired differences and the targets, raw samples included.
 */
export async function runLoaderTraceBenchmark({ rounds = MIN_ROUNDS, log = console.log, progress = () => {} } = {}) {
  const measuredRounds = Math.max(MIN_ROUNDS, rounds);
  const scripts = { cnv: '', plausible: '', segment: segmentStandaloneCode() };
  const { CLICK_COOKIE } = await importTs('src/protocol/cookies.ts');
  const server = await startLoaderServer(scripts);
  const browser = await launch().catch(async (error) => {
    await server.close();
    throw error;
  });
  const samples = Object.fromEntries(VARIANTS.map((v) => [v, []]));
  try {
    scripts.cnv = await cnvLoaderCode(cnvSiteConfig(server.origin(HOSTS.page)));
    scripts.plausible = await plausibleTrackerCode({ domain: HOSTS.page, endpoint: `${server.origin(HOSTS.plausible)}/api/event` });
    log(`loader: ${browser.product} (${browser.executable}), ${CPU_THROTTLE}x CPU throttle, ${measuredRounds} interleaved rounds + 1 warm-up, plain CDP (Page, Emulation, Performance, Tracing)`);
    for (let round = 0; round <= measuredRounds; round++) {
      for (const variant of roundOrder(VARIANTS, round)) {
        const sample = await traceLoad(browser.cdp, server, variant, CLICK_COOKIE);
        if (round > 0) samples[variant].push(sample); // round 0 warms the disk cache and V8's code cache of the browser
      }
      progress(round === 0 ? 'loader: warm-up round' : `loader: round ${round}/${measuredRounds}`);
    }
  } finally {
    await browser.close();
    await server.close();
  }

  const chunkSizes = segmentChunkSizes();
  const chunks = server
    .paths()
    .map((path) => /^\/analytics-next\/bundles\/([^/]+)$/.exec(path)?.[1])
    .filter((name) => name && chunkSizes[name])
    .sort()
    .map((name) => ({ name, ...chunkSizes[name] }));
  const sum = (key) => chunks.reduce((total, c) => total + c[key], 0);

  const bytes = Object.fromEntries(VARIANTS.map((v) => [v, measureBytes(scripts[v])]));
  const cost = {};
  for (const v of VARIANTS) {
    const list = samples[v];
    const of = (key) => list.map((s) => s[key]);
    cost[v] = {
      cpu_ms: median(of('cpu')),
      wall_ms: median(of('wall')),
      tasks: median(of('tasks')),
      script_duration_ms: median(of('scriptDuration')),
      requests: median(of('requests')),
      wire_bytes: median(of('wireBytes')),
      encodings: [...new Set(list.flatMap((s) => s.encodings))].sort(),
      full_boot: { booted: list.filter((s) => s.booted).length, loads: list.length },
      samples: { cpu_ms: of('cpu').map(round1), wall_ms: of('wall').map(round1), tasks: of('tasks'), script_duration_ms: of('scriptDuration').map(round1) },
    };
  }
  const paired = {};
  for (const other of OTHERS) {
    const difference = (key) => samples.cnv.map((s, i) => s[key] - samples[other][i][key]);
    paired[other] = { cpu_ms: summarizeDifferences(difference('cpu')), wall_ms: summarizeDifferences(difference('wall')) };
  }
  const allBooted = (v) => cost[v].full_boot.booted === cost[v].full_boot.loads;
  const cpu = paired.plausible.cpu_ms;
  return {
    chromium: browser.product,
    cpu_throttle: CPU_THROTTLE,
    rounds: measuredRounds,
    warmup_rounds: 1,
    protocol: 'plain CDP over --remote-debugging-pipe: Page, Emulation, Performance, Tracing',
    labels: Object.fromEntries(VARIANTS.map((v) => [v, SCRIPTS[v].label])),
    bytes,
    segment_lazy_chunks: { files: chunks, raw: sum('raw'), gzip: sum('gzip'), brotli: sum('brotli') },
    cost,
    paired,
    targets: {
      cpu_below_plausible: {
        target: "main-thread CPU time below Plausible's (trace, paired rounds)",
        cnv_ms: cost.cnv.cpu_ms,
        plausible_ms: cost.plausible.cpu_ms,
        paired_median_ms: cpu.median,
        cnv_cheaper_rounds: `${cpu.cnv_cheaper}/${cpu.rounds}`,
        // Both medians and the paired median must agree, and every load of both must have booted (a load that did not
        // would be measured without its script's work).
        met: allBooted('cnv') && allBooted('plausible') && cost.cnv.cpu_ms < cost.plausible.cpu_ms && cpu.median < 0,
      },
      gzip_gate: { target: `<= ${num(LOADER_GZIP_BUDGET)} B gzip (build gate)`, limit: LOADER_GZIP_BUDGET, value: bytes.cnv.gzip, met: bytes.cnv.gzip <= LOADER_GZIP_BUDGET },
      gzip_target: { target: `<= ${num(LOADER_GZIP_TARGET)} B gzip (target)`, limit: LOADER_GZIP_TARGET, value: bytes.cnv.gzip, met: bytes.cnv.gzip <= LOADER_GZIP_TARGET },
    },
  };
}

/** The loader benchmark's tables and targets as text. */
export function formatLoaderTraceResults(result) {
  const { bytes, cost, labels } = result;
  const variants = Object.keys(cost);
  const scriptTable = formatTable(
    ['script', 'raw B', 'gzip B', 'brotli B', 'full boot', 'CPU ms', 'wall ms', 'tasks', 'ScriptDuration ms', 'requests', 'on the wire B'],
    variants.map((v) => [
      labels[v],
      num(bytes[v].raw),
      num(bytes[v].gzip),
      num(bytes[v].brotli),
      `${cost[v].full_boot.booted}/${cost[v].full_boot.loads}`,
      num(cost[v].cpu_ms, 1),
      num(cost[v].wall_ms, 1),
      num(cost[v].tasks, 1),
      num(cost[v].script_duration_ms, 1),
      num(cost[v].requests ?? Number.NaN, 1),
      `${num(cost[v].wire_bytes ?? Number.NaN)}${cost[v].encodings?.length ? ` (${cost[v].encodings.join(', ')})` : ''}`,
    ]),
  );
  const chunks = result.segment_lazy_chunks;
  const chunkNote = chunks.files.length
    ? `Segment also loaded ${chunks.files.length} lazy chunk(s), not in its bytes above: ${num(chunks.raw)} B raw, ${num(chunks.gzip)} B gzip (${chunks.files.map((c) => c.name).join(', ')})`
    : 'Segment loaded no lazy chunks (no destinations, no middleware); its bytes are those of its standalone bundle.';
  const pairedRows = [];
  for (const [other, byMetric] of Object.entries(result.paired)) {
    for (const [metric, d] of Object.entries(byMetric)) {
      pairedRows.push([labels[other], metric === 'cpu_ms' ? 'CPU' : 'wall', num(d.median, 1), `${num(d.p25, 1)} .. ${num(d.p75, 1)}`, `${num(d.min, 1)} .. ${num(d.max, 1)}`, `${d.cnv_cheaper}/${d.rounds}`]);
    }
  }
  const pairedTable = formatTable(['cnv minus', 'time', 'median ms', 'p25 .. p75 ms', 'min .. max ms', 'cnv cheaper'], pairedRows);
  const t = result.targets;
  const notBooted = variants.filter((v) => cost[v].full_boot.booted < cost[v].full_boot.loads);
  return [
    `== Loader: bytes and main-thread time from a trace (${result.chromium}, ${result.cpu_throttle}x CPU throttle, median of ${result.rounds} interleaved rounds after ${result.warmup_rounds} warm-up; ${result.protocol}) ==`,
    scriptTable,
    chunkNote,
    'CPU and wall: main-thread time of the tasks running the script\'s code (trace `tdur` / `dur`); full boot: loads whose boot showed within 10 s (cnv: its ad touch cookie, written with no request; Plausible: its pageview; Segment: its page() call).',
    'requests and on the wire: per page view (medians), every request the script made to its hosts and the response bytes sent (scripts compressed by the browser\'s Accept-Encoding: over http Chromium offers gzip, not brotli).',
    '',
    '== Loader: paired per-round differences (negative: cnv cheaper) ==',
    pairedTable,
    ...(notBooted.length ? ['', `warning: some loads did not show their script's own request within 10 s: ${notBooted.map((v) => `${labels[v]} ${cost[v].full_boot.loads - cost[v].full_boot.booted}`).join(', ')}`] : []),
    '',
    `target  cnv CPU time below Plausible's: ${num(t.cpu_below_plausible.cnv_ms, 1)} vs ${num(t.cpu_below_plausible.plausible_ms, 1)} ms, paired median ${num(t.cpu_below_plausible.paired_median_ms, 1)} ms, cnv cheaper in ${t.cpu_below_plausible.cnv_cheaper_rounds} rounds -> ${mark(t.cpu_below_plausible.met)}`,
    `target  cnv ${t.gzip_gate.target}: ${num(t.gzip_gate.value)} B -> ${mark(t.gzip_gate.met)}`,
    `target  cnv ${t.gzip_target.target}: ${num(t.gzip_target.value)} B -> ${mark(t.gzip_target.met)}`,
  ].join('\n');
}

// Run as a script: the loader benchmark alone, printed (bench/run.mjs --only=loader also writes bench/results/latest.json).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const raw = process.env.BENCH_LOADS;
  const rounds = raw === undefined || raw === '' ? MIN_ROUNDS : Number(raw);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_LOADS must be a positive integer, got '${raw}'`);
  console.log(formatLoaderTraceResults(await runLoaderTraceBenchmark({ rounds })));
}
