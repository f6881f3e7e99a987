/**
 * `npm run bench` (after `node build.mjs`): the loader's bytes and main-thread time beside Plausible and Segment,
 * measured fairly from a Chromium trace (issues 2 and 10, bench/loader-trace.mjs), snapshot ingest (issue 3), and
 * signed webhook reports with their delivery delay (issue 4); `delivery` (not in the default run: the webhook section
 * measures it after its load phase) times report -> delivered alone.
 * Figures, not assertions: every target is printed beside its figure with a met / NOT MET mark, and the exit code is 0
 * whatever the figures; it is 1 only when a benchmark could not run. Results also go to bench/results/latest.json.
 *
 *   node bench/run.mjs [--only=loader,ingest,webhook,delivery] [--store=embedded|postgres|both] [--instances=N] [--profile]
 *   --store: embedded PGlite (default without DATABASE_URL), PostgreSQL (DATABASE_URL names a server; a fresh database
 *   is created on it and dropped afterwards), or both in one run; --instances=N: N service processes on the one
 *   PostgreSQL behind the load generator; --profile: CPU profiles of every service process in bench/results/profiles/,
 *   its HTTP thread's per load window and each thread's over the whole run (node --cpu-prof, PGlite's worker included;
 *   open them in Chrome DevTools or speedscope; bench/profile-summary.mjs prints the top costs).
 *   BENCH_LOADS (loader rounds, each loading every script once; default and minimum 15),
 *   BENCH_DURATION (seconds per load run, default 10), BENCH_CONNECTIONS (default 50),
 *   BENCH_DELIVERY_SAMPLE (reports timed by --only=delivery, default 100), BENCH_DELIVERY_RATE (per second, default 20),
 *   BENCH_RETRIES (how many more times a load window is measured when the hypervisor took the cores from it, default 2)
 *   BENCH_V8_HEAP=default (the service processes with V8's own heap growth instead of the entries' setting),
 *   BENCH_SERVICE_NODE_FLAGS (Node/V8 flags of each service process)
 *
 * Under every load window the run prints what the whole machine did meanwhile (support/machine-time.mjs: the share of
 * CPU time stolen by the hypervisor, over the window and in its worst second, and the share idle); the summary prints
 * each figure's steal beside it.
 *
 * The load generator (autocannon) runs in a child process, the fake Google (OAuth and Data Manager API) in another,
 * each service under test in its own (bench/service-process.mjs: its CPU time per request and RSS are its own), and
 * the bare Fastify route in this one. On a 2-core machine, autocannon in the service's own process would take
 * event-loop time from the very thing it measures; as a child it gets the other core, the way a client on another
 * machine would (it still competes for the 2 cores, which the figures include).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { formatLoaderTraceResults, runLoaderTraceBenchmark } from './loader-trace.mjs';
import { costRatio, formatIngestResults, measureBareRoute, RSS_TARGET_MB, runIngestBenchmark } from './ingest.mjs';
import { formatDeliveryResults, formatWebhookResults, runDeliveryBenchmark, runWebhookBenchmark } from './webhook.mjs';
import { startBareRoute } from './bare-route.mjs';
import { SERVICE_ALLOCATOR, SERVICE_HEAP, STORE_LABELS, startFleet } from './fleet.mjs';
import { startChild } from './support/child.mjs';
import { formatTable, mark, num, times } from './support/table.mjs';
import { DISTURBED_PEAK_STEAL_SHARE, DISTURBED_STEAL_SHARE, isDisturbed, percent, stealCell, waitUntilIdle, worstOf } from './support/machine-time.mjs';

const benchDir = new URL('.', import.meta.url).pathname;
const SECTIONS = ['loader', 'ingest', 'webhook', 'delivery'];
/** What runs without --only. */
const DEFAULT_SECTIONS = ['loader', 'ingest', 'webhook'];

function intEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

function parseOnly(argv) {
  const arg = argv.find((a) => a.startsWith('--only='));
  if (!arg) return new Set(DEFAULT_SECTIONS);
  const wanted = arg.slice('--only='.length).split(',').filter(Boolean);
  const unknown = wanted.filter((w) => !SECTIONS.includes(w));
  if (unknown.length) throw new Error(`unknown section(s) ${unknown.join(', ')}; choose from ${SECTIONS.join(', ')}`);
  return new Set(wanted);
}

/**
 * --store=embedded|postgres|both (PostgreSQL: DATABASE_URL names the server; the benchmark creates a fresh database on
 * it and drops it afterwards), --instances=N (service processes on the one PostgreSQL), --profile (CPU profiles of
 * every service process and each of its threads, written to bench/results/profiles/).
 */
function parseServer(argv) {
  const value = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const store = value('store') ?? (process.env.DATABASE_URL ? 'postgres' : 'embedded');
  const stores = store === 'both' ? ['embedded', 'postgres'] : [store];
  if (stores.some((s) => !(s in STORE_LABELS))) throw new Error(`--store must be embedded, postgres or both, got '${store}'`);
  const instances = Number(value('instances') ?? 1);
  if (!Number.isInteger(instances) || instances < 1) throw new Error(`--instances must be a positive integer`);
  if (instances > 1 && !stores.includes('postgres')) throw new Error('--instances needs --store=postgres or --store=both');
  if (stores.includes('postgres') && !process.env.DATABASE_URL) throw new Error('--store=postgres needs DATABASE_URL');
  return { stores, instances, databaseUrl: process.env.DATABASE_URL, profile: argv.includes('--profile') };
}

/**
 * The server sections on one store: the services in their own processes (fleet.mjs), the fake Google and the load
 * generator in theirs, the bare Fastify route in this one, measured just before each service window and again after it
 * so the ratios are side by side.
 */
async function runServerSections({ store, instances, only, options, server, progress }) {
  const out = { store, instances };
  const closers = [];
  try {
    const fakeAds = await startChild(join(benchDir, 'fake-ads-process.mjs'));
    closers.push(() => fakeAds.stop());
    progress(`starting ${instances > 1 ? `${instances} service processes` : 'the service'} on a fresh ${STORE_LABELS[store]}`);
    const sut = await startFleet({
      store,
      instances,
      fakeEnv: await fakeAds.call({ type: 'env' }),
      databaseUrl: server.databaseUrl,
      profileDir: server.profile ? join(benchDir, 'results', 'profiles') : null,
    });
    closers.push(() => sut.close());
    endProgress();

    if (only.has('delivery')) {
      progress('report -> delivered');
      out.delivery = await runDeliveryBenchmark({ sut, fakeAds, secret: sut.secret, sample: intEnv('BENCH_DELIVERY_SAMPLE', 100), sampleRate: intEnv('BENCH_DELIVERY_RATE', 20) });
      endProgress();
      console.log(formatDeliveryResults(out.delivery) + '\n');
    }
    if (!only.has('ingest') && !only.has('webhook')) return out;
    const loadgen = await startChild(join(benchDir, 'load-worker.mjs'));
    closers.push(() => loadgen.stop());
    const bare = await startBareRoute();
    closers.push(() => bare.close());

    const load = { connections: options.connections, duration: options.duration, warmup: options.warmup };
    // The bare route is measured before each section's service window and again after it, once the service is idle
    // (bracketBare in ingest.mjs): the ratio is to the mean of the two. The window after one section is the window
    // before the next.
    progress('bare route');
    let bareBefore = await measureBareRoute({ loadgen, bare, ...load });
    const bareAfter = async () => {
      progress('bare route, after the service is idle');
      const idle = await waitUntilIdle(sut.pids);
      const window = await measureBareRoute({ loadgen, bare, ...load });
      return idle ? window : { ...window, service_busy: true }; // said beside the ratio (ratioLine in ingest.mjs)
    };
    if (only.has('ingest')) {
      progress('snapshot ingest');
      out.ingest = await runIngestBenchmark({ sut, loadgen, bareResult: bareBefore, bareAfter, ...load });
      bareBefore = out.ingest.bare.windows?.after ?? bareBefore;
      endProgress();
      console.log(formatIngestResults(out.ingest) + '\n');
    }
    if (only.has('webhook')) {
      progress('webhook reports, then delivery');
      out.webhook = await runWebhookBenchmark({ sut, loadgen, fakeAds, bareResult: bareBefore, bareAfter, secret: sut.secret, ...load });
      endProgress();
      console.log(formatWebhookResults(out.webhook) + '\n');
    }
    return out;
  } finally {
    for (const close of closers.reverse()) await close().catch((error) => console.error(`while stopping: ${error}`));
  }
}

const progress = process.stdout.isTTY ? (message) => process.stdout.write(`\r${message}   `) : () => {};
const endProgress = () => process.stdout.isTTY && process.stdout.write('\r\x1b[K');

async function main() {
  const only = parseOnly(process.argv.slice(2));
  const server = parseServer(process.argv.slice(2));
  const options = {
    loader_rounds: intEnv('BENCH_LOADS', 15),
    duration: intEnv('BENCH_DURATION', 10),
    warmup: 2,
    connections: intEnv('BENCH_CONNECTIONS', 50),
  };
  const started = Date.now();
  const results = {
    started_at: new Date(started).toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, platform: process.platform, load_average_at_start: loadavg().map((l) => Math.round(l * 100) / 100), allocator: SERVICE_ALLOCATOR.env.GLIBC_TUNABLES ?? null, v8_heap: SERVICE_HEAP.flags[0] ?? null },
    options: { ...options, stores: server.stores, instances: server.instances },
    errors: [],
  };
  console.log(`cnv benchmarks: ${results.machine.cpus} cores (${results.machine.cpu_model}), Node ${process.version}, load average ${results.machine.load_average_at_start.join(' ')}`);
  console.log('Figures, not assertions: other processes on this machine share the cores and move every figure.\n');
  if (only.has('ingest') || only.has('webhook') || only.has('delivery')) {
    console.log(`server stores: ${server.stores.map((s) => STORE_LABELS[s]).join(' and ')}${server.instances > 1 ? `; ${server.instances} service processes on PostgreSQL` : ''}; allocator: ${SERVICE_ALLOCATOR.note}; V8 heap growth: ${SERVICE_HEAP.note}\n`);
  }

  results.section_seconds = {};
  const section = async (name, fn) => {
    const sectionStart = Date.now();
    try {
      await fn();
    } catch (error) {
      endProgress();
      results.errors.push({ section: name, error: String(error?.stack ?? error) });
      console.error(`\n${name}: could not run: ${error?.stack ?? error}\n`);
    } finally {
      results.section_seconds[name] = Math.round((Date.now() - sectionStart) / 100) / 10;
    }
  };

  if (only.has('loader')) {
    await section('loader', async () => {
      results.loader = await runLoaderTraceBenchmark({ rounds: options.loader_rounds, progress });
      endProgress();
      console.log(formatLoaderTraceResults(results.loader) + '\n');
    });
  }

  if (only.has('ingest') || only.has('webhook') || only.has('delivery')) {
    results.stores = {};
    for (const store of server.stores) {
      const instances = store === 'postgres' ? server.instances : 1;
      await section(`server on ${STORE_LABELS[store]}`, async () => {
        results.stores[store] = await runServerSections({ store, instances, only, options, server, progress });
      });
    }
  }

  results.duration_s = Math.round((Date.now() - started) / 100) / 10;
  results.machine.load_average_at_end = loadavg().map((l) => Math.round(l * 100) / 100);
  console.log(summary(results));
  const outDir = join(benchDir, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), JSON.stringify(results, null, 2) + '\n');
  const sections = Object.entries(results.section_seconds).map(([name, s]) => `${name} ${s} s`).join(', ');
  console.log(`\nwrote bench/results/latest.json (${results.duration_s} s in all: ${sections})`);
  return results.errors.length === 0 ? 0 : 1;
}

/**
 * One table of every target, met or not, with the steal of the window each figure came from (the hypervisor's share
 * of the machine's CPU time; for a ratio, the worse of its two windows). A figure from a disturbed window is marked so,
 * met or not: it measured the host more than the service (a disturbed bare route even flatters the service's ratio).
 */
function summary(results) {
  const rows = [];
  let disturbed = 0;
  const add = (area, target, value, met, machine) => {
    const hit = isDisturbed(machine);
    if (hit) disturbed++;
    rows.push([area, target, value, stealCell(machine), hit ? `${mark(met)} (disturbed)` : mark(met)]);
  };
  const l = results.loader;
  if (l) {
    const cpu = l.targets.cpu_below_plausible;
    add('loader', "CPU time below Plausible's", `${num(cpu.cnv_ms, 1)} vs ${num(cpu.plausible_ms, 1)} ms, paired median ${num(cpu.paired_median_ms, 1)} ms, cheaper in ${cpu.cnv_cheaper_rounds}`, cpu.met);
    add('loader', l.targets.gzip_gate.target, `${num(l.targets.gzip_gate.value)} B`, l.targets.gzip_gate.met);
    add('loader', l.targets.gzip_target.target, `${num(l.targets.gzip_target.value)} B`, l.targets.gzip_target.met);
  }
  for (const [store, r] of Object.entries(results.stores ?? {})) {
    const label = `${store}${r.instances > 1 ? ` x${r.instances}` : ''}`;
    const rss = (usage) => {
      if (!usage) return;
      const cpu = `${num(usage.cpu_us_per_request)} µs CPU/request`;
      if (store === 'embedded') add(label, `RSS <= ${RSS_TARGET_MB} MB under load`, `${num(usage.rss_peak_mb)} MB (${cpu})`, usage.rss_peak_mb <= RSS_TARGET_MB, usage.machine);
      else add(label, 'RSS under load (printed)', `${num(usage.rss_peak_mb)} MB per instance at most (${cpu})`, null, usage.machine);
    };
    const i = r.ingest;
    if (i) {
      add(`${label} ingest`, i.targets.of_bare.target, `${times(i.targets.of_bare.value)} (${num(i.targets.per_second.value)} /s; cost ratio ${times(costRatio(i.bare, i.usage))})`, i.targets.of_bare.met, worstOf(i.usage?.machine, i.bare?.machine));
      add(`${label} ingest`, i.targets.p99.target, `${num(i.targets.p99.value, 1)} ms`, i.targets.p99.met, i.usage?.machine);
      add(`${label} ingest`, i.targets.nothing_lost.target, `${num(i.accounting.lost)} lost`, i.targets.nothing_lost.met);
      rss(i.usage);
    }
    const w = r.webhook;
    if (w) {
      add(`${label} webhook`, w.targets.of_bare.target, `${times(w.ratio_to_bare)} (${num(w.targets.per_second.value)} /s; cost ratio ${times(costRatio(w.bare, w.usage))})`, w.targets.of_bare.met, worstOf(w.usage?.machine, w.bare?.machine));
      add(`${label} webhook`, w.targets.p99.target, `${num(w.targets.p99.value, 1)} ms`, w.targets.p99.met, w.usage?.machine);
      add(`${label} webhook`, w.targets.delivery_p99.target, `${num(w.targets.delivery_p99.value)} ms (p50 ${num(w.delivery.p50_ms)} ms)`, w.targets.delivery_p99.met, w.delivery.machine);
      add(`${label} webhook`, w.targets.nothing_lost.target, `${num(w.accounting.answered_200 - w.accounting.reports_stored)} lost`, w.targets.nothing_lost.met);
      add(`${label} webhook`, w.targets.delivered_once.target, `${num(w.deliveries.not_delivered)} not delivered, ${num(w.deliveries.doubled)} doubled`, w.targets.delivered_once.met);
      rss(w.usage);
    }
    const d = r.delivery;
    if (d) add(`${label} delivery`, d.targets.delivery_p99.target, `${num(d.targets.delivery_p99.value)} ms (p50 ${num(d.delivery.p50_ms)} ms)`, d.targets.delivery_p99.met, d.delivery.machine);
  }
  for (const e of results.errors) rows.push([e.section, 'could not run', e.error.split('\n')[0].slice(0, 80), '-', 'n/a']);
  const bareWindows = (bare) => (bare?.windows ? [bare.windows.before, bare.windows.after] : [bare]);
  const windows = Object.values(results.stores ?? {}).flatMap((r) => [r.ingest, ...bareWindows(r.ingest?.bare), r.webhook, ...bareWindows(r.webhook?.bare)]).filter(Boolean);
  const remeasured = new Set(windows.filter((w) => w.attempts?.length > 1)).size;
  const note = [
    "steal: the share of the machine's CPU time the hypervisor gave to other guests during the figure's window, and in its worst second.",
    ...(remeasured > 0 ? [`${remeasured} window(s) measured again because the machine disturbed them (BENCH_RETRIES); each section lists its attempts.`] : []),
    disturbed > 0
      ? `${disturbed} figure(s) came from a disturbed window (steal ${percent(DISTURBED_STEAL_SHARE)} or more, or ${percent(DISTURBED_PEAK_STEAL_SHARE)} in a second): ` +
        'they measured the host more than the service; run again.'
      : 'No figure came from a disturbed window.',
  ];
  return ['== Summary ==', formatTable(['area', 'target', 'measured', 'steal', 'mark'], rows), ...note].join('\n');
}

process.exitCode = await main();
