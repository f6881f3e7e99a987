/**
 * `npm run bench` (after `node build.mjs`): the loader's bytes and main-thread time beside Plausible and Segment,
 * measured fairly from a Chromium trace (issues 2 and 10, bench/loader-trace.mjs), snapshot ingest (issue 3), and
 * signed webhook reports with their delivery delay (issue 4); `delivery` (not in the default run: the webhook section
 * measures it after its load phase) times report -> delivered alone.
 * Figures, not assertions: every target is printed beside its figure with a met / NOT MET mark, and the exit code is 0
 * whatever the figures; it is 1 only when a benchmark could not run. Results also go to bench/results/latest.json.
 *
 *   node bench/run.mjs [--only=loader,ingest,webhook,delivery]
 *   BENCH_LOADS (loader rounds, each loading every script once; default and minimum 15),
 *   BENCH_DURATION (seconds per load run, default 10), BENCH_CONNECTIONS (default 50),
 *   BENCH_DELIVERY_SAMPLE (reports timed by --only=delivery, default 100), BENCH_DELIVERY_RATE (per second, default 20)
 *
 * The load generator (autocannon) runs in a child process, the fake Google (OAuth and Data Manager API) in another,
 * and the services under
 * test (the real service and the bare Fastify route) in this one. On a 2-core machine, autocannon in the service's own
 * process would take event-loop time from the very thing it measures; as a child it gets the other core, the way a
 * client on another machine would (it still competes for the 2 cores, which the figures include).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { formatLoaderTraceResults, runLoaderTraceBenchmark } from './loader-trace.mjs';
import { formatIngestResults, measureBareRoute, runIngestBenchmark } from './ingest.mjs';
import { formatDeliveryResults, formatWebhookResults, runDeliveryBenchmark, runWebhookBenchmark } from './webhook.mjs';
import { startBareRoute } from './bare-route.mjs';
import { setSiteDomain, setUpWebhookFlow, startServiceUnderTest } from './service-under-test.mjs';
import { startChild } from './support/child.mjs';
import { formatTable, mark, num, times } from './support/table.mjs';

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

const progress = process.stdout.isTTY ? (message) => process.stdout.write(`\r${message}   `) : () => {};
const endProgress = () => process.stdout.isTTY && process.stdout.write('\r\x1b[K');

async function main() {
  const only = parseOnly(process.argv.slice(2));
  const options = {
    loader_rounds: intEnv('BENCH_LOADS', 15),
    duration: intEnv('BENCH_DURATION', 10),
    warmup: 2,
    connections: intEnv('BENCH_CONNECTIONS', 50),
  };
  const started = Date.now();
  const results = {
    started_at: new Date(started).toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, platform: process.platform, load_average_at_start: loadavg().map((l) => Math.round(l * 100) / 100) },
    options,
    errors: [],
  };
  console.log(`cnv benchmarks: ${results.machine.cpus} cores (${results.machine.cpu_model}), Node ${process.version}, load average ${results.machine.load_average_at_start.join(' ')}`);
  console.log('Figures, not assertions: other processes on this machine share the cores and move every figure.\n');

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
    await section('server (setup, ingest, webhook and delivery)', async () => {
      const closers = [];
      try {
        const fakeAds = await startChild(join(benchDir, 'fake-ads-process.mjs'));
        closers.push(() => fakeAds.stop());
        progress('starting the service on a fresh embedded PGlite');
        // Every Google call of the service (OAuth and the Data Manager API) goes to the fake Google.
        const sut = await startServiceUnderTest(await fakeAds.call({ type: 'env' }));
        closers.push(() => sut.close());
        await setSiteDomain(sut);
        endProgress();

        // One Google Ads flow (connected through the OAuth handoff) serves the webhook and delivery sections.
        const flow = only.has('webhook') || only.has('delivery') ? await setUpWebhookFlow(sut) : null;

        if (only.has('delivery')) {
          await section('delivery', async () => {
            progress('report -> delivered');
            results.delivery = await runDeliveryBenchmark({ sut, fakeAds, secret: flow.secret, sample: intEnv('BENCH_DELIVERY_SAMPLE', 100), sampleRate: intEnv('BENCH_DELIVERY_RATE', 20) });
            endProgress();
            console.log(formatDeliveryResults(results.delivery) + '\n');
          });
        }
        if (!only.has('ingest') && !only.has('webhook')) return;
        const loadgen = await startChild(join(benchDir, 'load-worker.mjs'));
        closers.push(() => loadgen.stop());
        const bare = await startBareRoute();
        closers.push(() => bare.close());

        const load = { connections: options.connections, duration: options.duration, warmup: options.warmup };
        progress('bare route');
        const bareResult = await measureBareRoute({ loadgen, bare, ...load });
        if (only.has('ingest')) {
          await section('ingest', async () => {
            progress('snapshot ingest');
            results.ingest = await runIngestBenchmark({ sut, loadgen, bareResult, ...load });
            endProgress();
            console.log(formatIngestResults(results.ingest) + '\n');
          });
        }
        if (only.has('webhook')) {
          await section('webhook', async () => {
            progress('webhook reports, then delivery');
            results.webhook = await runWebhookBenchmark({ sut, loadgen, fakeAds, bareResult, secret: flow.secret, ...load });
            endProgress();
            console.log(formatWebhookResults(results.webhook) + '\n');
          });
        }
      } finally {
        for (const close of closers.reverse()) await close().catch((error) => console.error(`while stopping: ${error}`));
      }
    });
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

/** One table of every target, met or not. */
function summary(results) {
  const rows = [];
  const add = (area, target, value, met) => rows.push([area, target, value, mark(met)]);
  const l = results.loader;
  if (l) {
    const cpu = l.targets.cpu_below_plausible;
    add('loader', "CPU time below Plausible's", `${num(cpu.cnv_ms, 1)} vs ${num(cpu.plausible_ms, 1)} ms, paired median ${num(cpu.paired_median_ms, 1)} ms, cheaper in ${cpu.cnv_cheaper_rounds}`, cpu.met);
    add('loader', l.targets.gzip_gate.target, `${num(l.targets.gzip_gate.value)} B`, l.targets.gzip_gate.met);
    add('loader', l.targets.gzip_target.target, `${num(l.targets.gzip_target.value)} B`, l.targets.gzip_target.met);
  }
  const i = results.ingest;
  if (i) {
    add('ingest', i.targets.per_second.target, `${num(i.targets.per_second.value)} /s`, i.targets.per_second.met);
    add('ingest', i.targets.p99.target, `${num(i.targets.p99.value, 1)} ms`, i.targets.p99.met);
    add('ingest', i.targets.of_bare.target, times(i.targets.of_bare.value), i.targets.of_bare.met);
    add('ingest', i.targets.nothing_lost.target, `${num(i.accounting.lost)} lost`, i.targets.nothing_lost.met);
  }
  const w = results.webhook;
  if (w) {
    add('webhook', w.targets.per_second.target, `${num(w.targets.per_second.value)} /s (${times(w.ratio_to_bare)} of bare)`, w.targets.per_second.met);
    add('webhook', w.targets.p99.target, `${num(w.targets.p99.value, 1)} ms`, w.targets.p99.met);
    add('webhook', w.targets.delivery_p99.target, `${num(w.targets.delivery_p99.value)} ms (p50 ${num(w.delivery.p50_ms)} ms)`, w.targets.delivery_p99.met);
    add('webhook', w.targets.nothing_lost.target, `${num(w.accounting.answered_200 - w.accounting.reports_stored)} lost`, w.targets.nothing_lost.met);
  }
  const d = results.delivery;
  if (d) add('delivery', d.targets.delivery_p99.target, `${num(d.targets.delivery_p99.value)} ms (p50 ${num(d.delivery.p50_ms)} ms)`, d.targets.delivery_p99.met);
  for (const e of results.errors) rows.push([e.section, 'could not run', e.error.split('\n')[0].slice(0, 80), 'n/a']);
  return ['== Summary ==', formatTable(['area', 'target', 'measured', 'mark'], rows)].join('\n');
}

process.exitCode = await main();
