/**
 * The fair loader benchmark (issue 10): main-thread time of our loader beside Plausible's tracker, measured from a
 * Chromium trace.
 *
 * Fair how:
 * - Chromium is launched with --disable-blink-features=AutomationControlled (navigator.webdriver false: Plausible sends
 *   nothing otherwise), and every load checks that Plausible's pageview (and our config request) really arrived.
 * - Chromium is driven over a plain CDP pipe with only the Page, Emulation, Performance and Tracing domains: Playwright
 *   enables Runtime and Network, which make every fetch capture a stack and re-parse the script, a cost no visitor pays.
 * - The figure is the main-thread time, wall (`dur`) and CPU (`tdur`), that the trace's tasks spend running the script's
 *   code: evaluation, event and timer callbacks, promise callbacks after the config or fetch resolves, and lazy
 *   compiles (each page holds no code but the script under test). ScriptDuration (Performance.getMetrics) is printed
 *   beside it: it misses the work done after the config arrives.
 * - At least 15 rounds, interleaved (each round loads both, alternating which goes first), 4x CPU throttle, a fresh
 *   browser context per load. Medians, and the paired per-round differences with their spread.
 *
 * Usage: node build.mjs --loader-only && node bench/loader-trace.mjs   (BENCH_LOADS=15 rounds)
 */
import { spawn } from 'node:child_process';
import { measure as measureBytes } from '../build.mjs';
import { cnvLoaderCode, packageVersion, plausibleTrackerCode } from './loader-scripts.mjs';
import { CNV_SITE_KEY, HOSTS, startLoaderServer } from './loader-server.mjs';
import { median, percentile } from './support/stats.mjs';
import { importTs } from './support/ts-module.mjs';

const ROUNDS = Math.max(15, Number(process.env.BENCH_LOADS ?? 15));
const CPU_THROTTLE = 4;
const QUIET_MS = 500;
const SCRIPTS = {
  cnv: { label: 'cnv dist/loader.js', path: '/loader.js', booted: (server, before) => server.hits(`/collect/v1/sites/${CNV_SITE_KEY}/config`) > before.config },
  plausible: { label: `Plausible ${packageVersion('@plausible-analytics/tracker')}`, path: '/js/plausible.js', booted: (server, before) => server.hits('/api/event') > before.event },
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
  const cdp = cdpOverPipe(child);
  const { product } = await cdp.send('Browser.getVersion');
  return { cdp, product, close: () => child.kill() };
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

/** One load of a variant in a fresh browser context, traced; its figures and whether the script fully booted. */
async function traceLoad(cdp, server, variant) {
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
    const before = { config: server.hits(`/collect/v1/sites/${CNV_SITE_KEY}/config`), event: server.hits('/api/event') };
    const loaded = cdp.once('Page.loadEventFired', sessionId);
    await send('Page.navigate', { url: server.pageUrl(variant) });
    await loaded;
    const deadline = Date.now() + 10_000;
    while (!SCRIPTS[variant].booted(server, before) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const booted = SCRIPTS[variant].booted(server, before);
    await server.waitForQuiet(QUIET_MS);
    const { metrics } = await send('Performance.getMetrics');
    const complete = cdp.once('Tracing.tracingComplete', sessionId);
    await send('Tracing.end');
    await complete;
    stop();
    const scriptDuration = (metrics.find((m) => m.name === 'ScriptDuration')?.value ?? NaN) * 1000;
    return { ...scriptTaskTime(events), scriptDuration, booted };
  } finally {
    await cdp.send('Target.disposeBrowserContext', { browserContextId });
  }
}

const fmt = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const spread = (xs) => `p25 ${fmt(percentile(xs, 25))} .. p75 ${fmt(percentile(xs, 75))} (min ${fmt(Math.min(...xs))}, max ${fmt(Math.max(...xs))})`;

async function main() {
  const scripts = { cnv: cnvLoaderCode(), plausible: '' };
  const server = await startLoaderServer(scripts);
  scripts.plausible = await plausibleTrackerCode({ domain: HOSTS.page, endpoint: `${server.origin(HOSTS.plausible)}/api/event` });
  const browser = await launch();
  const samples = { cnv: [], plausible: [] };
  try {
    console.log(`${browser.product}, ${CPU_THROTTLE}x CPU throttle, ${ROUNDS} interleaved rounds, plain CDP (Page, Emulation, Performance, Tracing)`);
    for (let round = 0; round < ROUNDS + 1; round++) {
      const order = round % 2 ? ['plausible', 'cnv'] : ['cnv', 'plausible'];
      for (const variant of order) {
        const result = await traceLoad(browser.cdp, server, variant);
        if (round > 0) samples[variant].push(result); // round 0 warms the disk cache and V8's code cache of the browser
      }
    }
  } finally {
    browser.close();
    await server.close();
  }
  const rows = Object.entries(samples).map(([variant, list]) => {
    const bytes = measureBytes(scripts[variant]);
    return [
      SCRIPTS[variant].label,
      `${bytes.gzip} / ${bytes.brotli}`,
      `${list.filter((s) => s.booted).length}/${list.length}`,
      fmt(median(list.map((s) => s.cpu))),
      fmt(median(list.map((s) => s.wall))),
      fmt(median(list.map((s) => s.tasks))),
      fmt(median(list.map((s) => s.scriptDuration))),
    ];
  });
  const header = ['script', 'gzip / brotli B', 'full boot', 'CPU ms', 'wall ms', 'tasks', 'ScriptDuration ms (CPU)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  for (const row of [header, ...rows]) console.log(row.map((c, i) => String(c).padEnd(widths[i])).join('  '));
  const diff = (key) => samples.cnv.map((s, i) => s[key] - samples.plausible[i][key]);
  const cpuDiff = diff('cpu');
  const wallDiff = diff('wall');
  console.log(`\npaired per-round difference, cnv minus Plausible (negative: cnv cheaper)`);
  console.log(`  CPU  median ${fmt(median(cpuDiff))} ms, ${spread(cpuDiff)}; cnv cheaper in ${cpuDiff.filter((d) => d < 0).length}/${cpuDiff.length} rounds`);
  console.log(`  wall median ${fmt(median(wallDiff))} ms, ${spread(wallDiff)}; cnv cheaper in ${wallDiff.filter((d) => d < 0).length}/${wallDiff.length} rounds`);
  console.log(`target: cnv CPU time below Plausible's: ${median(cpuDiff) < 0 ? 'met' : 'NOT MET'}`);
  const notBooted = Object.values(samples).flat().filter((s) => !s.booted).length;
  if (notBooted) console.log(`warning: ${notBooted} loads did not show their script's own request (config or pageview) within 10 s`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
