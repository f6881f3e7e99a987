/**
 * Loader benchmark (issue 2): bytes and main-thread cost of our loader beside Plausible's tracker and Segment's
 * analytics-next, measured in one Chromium run: 4x CPU throttle, a fresh browser context per page load, loads
 * interleaved across the variants so background noise hits all alike, medians with the control page subtracted.
 *
 * Each load reads Chromium's Performance.getMetrics in one time domain: wall time (`timeTicks`, what the target
 * is judged on) and, when asked for (BENCH_LOADER_CPU=1, doubling the loads), main-thread CPU time (`threadTicks`): on
 * a shared machine it leaves out the time the thread waited for a core, so it is the steadier figure.
 */
import { launchChromium } from './support/browser.mjs';
import { measure as measureBytes } from '../build.mjs';
import { median, ratio } from './support/stats.mjs';
import { formatTable, mark, num, times } from './support/table.mjs';
import { cnvLoaderCode, packageVersion, plausibleTrackerCode, segmentChunkSizes, segmentStandaloneCode } from './loader-scripts.mjs';
import { HOSTS, startLoaderServer } from './loader-server.mjs';
import { importTs } from './support/ts-module.mjs';

/** The targets of issue 2. */
export const LOADER_TARGETS = { gzipBytes: 2048 };

const VARIANTS = ['control', 'cnv', 'plausible', 'segment'];
const SCRIPTS = ['cnv', 'plausible', 'segment'];
const LABELS = {
  control: 'control (no script)',
  cnv: 'cnv dist/loader.js',
  plausible: `Plausible tracker ${packageVersion('@plausible-analytics/tracker')}`,
  segment: `Segment analytics-next ${packageVersion('@segment/analytics-next')}`,
};
const CPU_THROTTLE = 4;
/** Chromium's metric time domains, keyed by what the tables call them. */
const DOMAINS = { wall: 'timeTicks', cpu: 'threadTicks' };
// After the load event: no request open for this long counts as idle (as Playwright's networkidle would, 500 ms).
const QUIET_MS = 500;

/** How long a load may take to show its full boot before it is measured anyway (and counted as not fully booted). */
const BOOT_TIMEOUT_MS = 10_000;

/**
 * One fresh page load: a new context (no cache, no cookies), throttled, measured by Chromium's performance metrics once
 * the script shows its full boot (see bootedFully) and the network has been quiet for QUIET_MS.
 */
async function measureLoad(browser, server, url, timeDomain, isBooted) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    const requests = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('request', (request) => requests.push(request.url()));
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable', { timeDomain });
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_THROTTLE });
    await page.goto(url, { waitUntil: 'load' });
    // On a busy machine a throttled page can pause longer than QUIET_MS between its requests, so wait for the boot itself.
    const bootDeadline = Date.now() + BOOT_TIMEOUT_MS;
    let cookies = [];
    while (Date.now() < bootDeadline) {
      cookies = (await context.cookies()).map((c) => c.name);
      if (isBooted({ requests, cookies })) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const idle = await server.waitForQuiet(QUIET_MS);
    const { metrics } = await cdp.send('Performance.getMetrics');
    const metric = (name) => metrics.find((m) => m.name === name)?.value ?? Number.NaN;
    cookies = (await context.cookies()).map((c) => c.name);
    return {
      scriptMs: metric('ScriptDuration') * 1000,
      taskMs: metric('TaskDuration') * 1000,
      requests,
      booted: isBooted({ requests, cookies }),
      errors: idle ? errors : [...errors, 'network never went quiet within 10 s'],
    };
  } finally {
    await context.close();
  }
}

/**
 * Whether a load shows the script's full boot: our loader recorded the ad click in its cookie (so it fetched the
 * config and passed the origin check), Plausible sent its pageview, Segment its page() call.
 */
function bootedFully(variant, { requests, cookies }, clickCookie) {
  if (variant === 'cnv') return cookies.includes(clickCookie);
  if (variant === 'plausible') return requests.some((url) => url.endsWith('/api/event'));
  if (variant === 'segment') return requests.some((url) => /\/v1\/[pt]$/.test(url));
  return true;
}

/** Runs the loader benchmark; `loads` page loads per variant and time domain (at least 15 for the figures). */
export async function runLoaderBenchmark({ loads = 15, cpuTime = false, log = console.log, progress = () => {} } = {}) {
  const domains = cpuTime ? ['wall', 'cpu'] : ['wall'];
  // The server reads this object on each request; Plausible's build needs the server's port, so it is filled after start.
  const scripts = { cnv: cnvLoaderCode(), segment: segmentStandaloneCode() };
  const server = await startLoaderServer(scripts);
  scripts.plausible = await plausibleTrackerCode({ domain: HOSTS.page, endpoint: `${server.origin(HOSTS.plausible)}/api/event` });
  const { CLICK_COOKIE } = await importTs('src/protocol/cookies.ts');
  const { browser, executablePath, version } = await launchChromium();
  const booted = Object.fromEntries(VARIANTS.map((v) => [v, 0]));
  const samples = Object.fromEntries(VARIANTS.map((v) => [v, Object.fromEntries(domains.map((d) => [d, []]))]));
  const requestCounts = Object.fromEntries(VARIANTS.map((v) => [v, []]));
  const chunkNames = new Set();
  const pageErrors = new Set();
  try {
    log(`loader: ${loads} fresh loads per variant${cpuTime ? ' and time domain' : ''}, Chromium ${version} (${executablePath}), CPU throttle ${CPU_THROTTLE}x`);
    // One unmeasured round warms the browser process itself (not the pages: every load has a fresh context).
    const isBooted = (variant) => (load) => bootedFully(variant, load, CLICK_COOKIE);
    for (const variant of VARIANTS) await measureLoad(browser, server, server.pageUrl(variant), DOMAINS.wall, isBooted(variant));
    for (let round = 0; round < loads; round++) {
      // Rotate the order each round so no variant always runs first or last.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]);
      for (const domain of domains) {
        for (const variant of order) {
          const sample = await measureLoad(browser, server, server.pageUrl(variant), DOMAINS[domain], isBooted(variant));
          samples[variant][domain].push(sample);
          requestCounts[variant].push(sample.requests.length);
          if (sample.booted) booted[variant]++;
          for (const error of sample.errors) pageErrors.add(`${variant}: ${error}`);
          for (const url of sample.requests) {
            const m = /\/analytics-next\/bundles\/([^/?]+)/.exec(url);
            if (m) chunkNames.add(m[1]);
          }
        }
      }
      progress(`loader: round ${round + 1}/${loads}`);
    }
  } finally {
    await browser.close();
    await server.close();
  }

  const chunkSizes = segmentChunkSizes();
  const chunks = [...chunkNames].sort().map((name) => ({ name, ...(chunkSizes[name] ?? { raw: 0, gzip: 0, brotli: 0 }) }));
  const sum = (key) => chunks.reduce((total, c) => total + c[key], 0);

  const cost = {};
  for (const domain of domains) {
    const med = (variant, key) => median(samples[variant][domain].map((s) => s[key]));
    cost[domain] = {};
    for (const variant of VARIANTS) {
      cost[domain][variant] = {
        script_ms: med(variant, 'scriptMs'),
        task_ms: med(variant, 'taskMs'),
        script_ms_minus_control: med(variant, 'scriptMs') - med('control', 'scriptMs'),
        task_ms_minus_control: med(variant, 'taskMs') - med('control', 'taskMs'),
        script_ms_samples: samples[variant][domain].map((s) => round1(s.scriptMs)),
        task_ms_samples: samples[variant][domain].map((s) => round1(s.taskMs)),
      };
    }
    for (const variant of SCRIPTS) {
      const r = cost[domain][variant];
      const ours = cost[domain].cnv;
      r.script_ratio_to_cnv = ratio(r.script_ms_minus_control, ours.script_ms_minus_control);
      r.task_ratio_to_cnv = ratio(r.task_ms_minus_control, ours.task_ms_minus_control);
    }
  }

  const bytes = Object.fromEntries(SCRIPTS.map((v) => [v, measureBytes(scripts[v])]));
  for (const v of SCRIPTS) {
    bytes[v].gzip_ratio_to_cnv = ratio(bytes[v].gzip, bytes.cnv.gzip);
    bytes[v].brotli_ratio_to_cnv = ratio(bytes[v].brotli, bytes.cnv.brotli);
  }
  const belowPlausible = (domain) =>
    cost[domain].cnv.script_ms_minus_control < cost[domain].plausible.script_ms_minus_control &&
    cost[domain].cnv.task_ms_minus_control < cost[domain].plausible.task_ms_minus_control;
  return {
    chromium: version,
    cpu_throttle: CPU_THROTTLE,
    loads_per_variant: loads,
    labels: LABELS,
    bytes,
    segment_lazy_chunks: { files: chunks, raw: sum('raw'), gzip: sum('gzip'), brotli: sum('brotli') },
    requests_per_load: Object.fromEntries(VARIANTS.map((v) => [v, median(requestCounts[v])])),
    full_boot_loads: Object.fromEntries(VARIANTS.map((v) => [v, `${booted[v]}/${requestCounts[v].length}`])),
    cost,
    targets: {
      gzip_bytes: { target: `<= ${num(LOADER_TARGETS.gzipBytes)} B gzip`, value: bytes.cnv.gzip, met: bytes.cnv.gzip <= LOADER_TARGETS.gzipBytes },
      main_thread_below_plausible: {
        target: "wall-time ScriptDuration and TaskDuration (control subtracted) below Plausible's",
        met: belowPlausible('wall'),
        cpu_time_also_below: cpuTime ? belowPlausible('cpu') : null,
      },
    },
    page_errors: [...pageErrors],
  };
}

function round1(value) {
  return Math.round(value * 10) / 10;
}

/** The loader benchmark's tables as text. */
export function formatLoaderResults(result) {
  const { bytes, labels } = result;
  const bytesTable = formatTable(
    ['script (first file)', 'raw B', 'gzip -9 B', 'brotli -11 B', 'gzip vs cnv', 'brotli vs cnv'],
    SCRIPTS.map((v) => [labels[v], num(bytes[v].raw), num(bytes[v].gzip), num(bytes[v].brotli), times(bytes[v].gzip_ratio_to_cnv), times(bytes[v].brotli_ratio_to_cnv)]),
  );
  const chunks = result.segment_lazy_chunks;
  const chunkNote = chunks.files.length
    ? `Segment also loaded ${chunks.files.length} lazy chunk(s): ${num(chunks.raw)} B raw, ${num(chunks.gzip)} B gzip (${chunks.files.map((c) => c.name).join(', ')})`
    : 'Segment loaded no lazy chunks for this source (no destinations, no middleware); its settings request is counted under requests.';
  const costTable = (domain) =>
    formatTable(
      ['page', 'Script ms', 'Task ms', 'Script-ctl', 'Task-ctl', 'Script vs cnv', 'Task vs cnv', 'requests', 'full boot'],
      VARIANTS.map((v) => {
        const r = result.cost[domain][v];
        const isControl = v === 'control';
        return [
          labels[v],
          num(r.script_ms, 1),
          num(r.task_ms, 1),
          isControl ? '-' : num(r.script_ms_minus_control, 1),
          isControl ? '-' : num(r.task_ms_minus_control, 1),
          isControl ? '-' : times(r.script_ratio_to_cnv),
          isControl ? '-' : times(r.task_ratio_to_cnv),
          num(result.requests_per_load[v]),
          v === 'control' ? '-' : result.full_boot_loads[v],
        ];
      }),
    );
  const t = result.targets;
  const wall = result.cost.wall;
  return [
    '== Loader: bytes ==',
    bytesTable,
    chunkNote,
    '',
    `== Loader: main-thread wall time, ${result.cpu_throttle}x CPU throttle (Chromium ${result.chromium}, median of ${result.loads_per_variant} fresh loads) ==`,
    costTable('wall'),
    ...(result.cost.cpu
      ? ['', `== Loader: main-thread CPU time (thread ticks), same conditions, separate loads ==`, costTable('cpu')]
      : ['(BENCH_LOADER_CPU=1 adds main-thread CPU time, the steadier figure on a busy machine, at twice the loads)']),
    ...(result.page_errors.length ? ['', `page errors: ${result.page_errors.join('; ')}`] : []),
    '',
    `target  cnv <= 2,048 B gzip: ${num(t.gzip_bytes.value)} B -> ${mark(t.gzip_bytes.met)}`,
    `target  cnv main-thread cost below Plausible's (wall, control subtracted): Script ${num(wall.cnv.script_ms_minus_control, 1)} vs ${num(wall.plausible.script_ms_minus_control, 1)} ms, ` +
      `Task ${num(wall.cnv.task_ms_minus_control, 1)} vs ${num(wall.plausible.task_ms_minus_control, 1)} ms -> ${mark(t.main_thread_below_plausible.met)}` +
      (t.main_thread_below_plausible.cpu_time_also_below === null ? '' : ` (CPU time: ${t.main_thread_below_plausible.cpu_time_also_below ? 'below too' : 'not below'})`),
  ].join('\n');
}
