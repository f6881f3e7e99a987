/**
 * The services under test of one store, each in its own process (bench/service-process.mjs): one on a fresh embedded
 * PGlite, or N on one fresh PostgreSQL database (created on the server DATABASE_URL names, dropped afterwards), the
 * first of which sets the site and the Google Ads flow up through the hosted handoffs. The load generator spreads its
 * connections over every instance's URL, as a load balancer in front of a stateless HTTP tier would.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { startChild } from './support/child.mjs';
import { importTs } from './support/ts-module.mjs';

const { onGlibc, withMallocTunables } = await importTs('src/launch/allocator.ts');
const { heapGrowthFlag } = await importTs('src/server/heap-growth.ts');

/** Which allocator setting the service processes get, and the line that says so. */
function serviceAllocator(env) {
  if (env.BENCH_MALLOC === 'default') return { env: {}, note: "glibc's defaults (BENCH_MALLOC=default)" };
  if (!onGlibc()) return { env: {}, note: 'not glibc: nothing to set' };
  const tuned = withMallocTunables(env, true);
  if (!tuned) return { env: {}, note: `GLIBC_TUNABLES=${env.GLIBC_TUNABLES}, as set in this environment` };
  return { env: { GLIBC_TUNABLES: tuned.GLIBC_TUNABLES }, note: `GLIBC_TUNABLES=${tuned.GLIBC_TUNABLES}, as npm start runs the service (BENCH_MALLOC=default: glibc's defaults)` };
}

/**
 * The environment of each service process besides the settings: glibc's allocator set as `npm start`'s launcher sets it
 * (src/launch/allocator.ts), so the figures are those of the service as shipped; `BENCH_MALLOC=default` measures glibc's
 * defaults instead. Decided once per run.
 */
export const SERVICE_ALLOCATOR = serviceAllocator(process.env);

/** BENCH_SERVICE_NODE_FLAGS: Node/V8 flags of each service process (e.g. to measure --optimize-for-size). */
const NODE_FLAGS = (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);

/**
 * V8's heap growth as the service's entries set it (src/server/heap-growth.ts), given as the same flag on the command
 * line; `BENCH_V8_HEAP=default` measures V8's own choice instead, and a --heap-growing-percent of
 * BENCH_SERVICE_NODE_FLAGS stands, as an operator's does. Decided once per run.
 */
export const SERVICE_HEAP = (() => {
  if (process.env.BENCH_V8_HEAP === 'default') return { flags: [], note: "V8's own (BENCH_V8_HEAP=default)" };
  const flag = heapGrowthFlag(NODE_FLAGS);
  if (!flag) return { flags: [], note: 'the factor BENCH_SERVICE_NODE_FLAGS gives' };
  return { flags: [flag], note: `${flag}, as the service's entries set it (BENCH_V8_HEAP=default: V8's own)` };
})();

const benchDir = new URL('.', import.meta.url).pathname;

/** The store names of --store, as printed. */
export const STORE_LABELS = { embedded: 'embedded PGlite', postgres: 'PostgreSQL' };

/** Creates a fresh database on the server of `databaseUrl`; returns its URL and a function that drops it. */
async function freshDatabase(databaseUrl) {
  const name = `cnv_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const again = new pg.Client({ connectionString: databaseUrl });
      await again.connect();
      try {
        await again.query(`drop database if exists ${name} with (force)`);
      } finally {
        await again.end();
      }
    },
  };
}

/**
 * Starts `instances` service processes on `store` with the fake platforms' settings `fakeEnv`. `profileDir`: write a
 * CPU profile of each service process over each load window there, and of each of its threads over the whole run.
 */
export async function startFleet({ store, instances = 1, fakeEnv, databaseUrl, profileDir, extraEnv = {} }) {
  if (store === 'embedded' && instances !== 1) throw new Error('--instances needs --store=postgres: the embedded store belongs to one process');
  const closers = [];
  const close = async () => {
    for (const fn of closers.splice(0).reverse()) await fn().catch((error) => console.error(`while stopping: ${error}`));
  };
  try {
    let database = null;
    if (store === 'postgres') {
      if (!databaseUrl) throw new Error('--store=postgres needs DATABASE_URL (a PostgreSQL server the benchmark may create a database on)');
      database = await freshDatabase(databaseUrl);
      closers.push(() => database.drop());
    }
    const env = {
      ...fakeEnv,
      ...extraEnv,
      // Every instance opens the same stored credentials.
      CNV_SECRET_KEY: randomBytes(32).toString('base64'),
      ...(database ? { DATABASE_URL: database.url } : {}),
    };
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const processes = [];
    const started = [];
    for (let i = 0; i < instances; i++) {
      const execArgv = [...SERVICE_HEAP.flags, ...NODE_FLAGS];
      // Profiling: besides the HTTP thread's profile of each load window (usageBegin), a whole-run profile of each of
      // the process's threads (node --cpu-prof), PGlite's worker included: on the embedded store half of the work.
      if (profileDir) execArgv.push('--cpu-prof', `--cpu-prof-dir=${join(profileDir, `${stamp}-${store}-${i + 1}-threads`)}`);
      const child = await startChild(join(benchDir, 'service-process.mjs'), { execArgv, env: SERVICE_ALLOCATOR.env });
      closers.push(async () => {
        await child.call({ type: 'stop' }).catch(() => undefined);
        await child.stop();
      });
      processes.push(child);
      // The first sets up the site and the flow; the others join the same database (after it, so they find the account).
      started.push(await child.call({ type: 'start', env, setup: i === 0 }));
    }
    const first = processes[0];
    const [{ site, secret }] = started;
    return {
      store,
      label: STORE_LABELS[store] ?? store,
      instances,
      database: database?.name ?? null,
      base: started[0].base,
      urls: started.map((s) => s.base),
      pids: started.map((s) => s.pid),
      site,
      secret,
      countRows: (table) => first.call({ type: 'count', table }),
      countPresent: (table, column, values) => first.call({ type: 'present', table, column, values }),
      sql: (sql, params) => first.call({ type: 'sql', sql, params }),
      /** Starts a load window in every instance (`section` names its CPU profiles when profiling). */
      usageBegin: (section) =>
        Promise.all(processes.map((p, i) => p.call({
          type: 'usage-begin',
          profile: profileDir ? join(profileDir, `${stamp}-${section}-${store}-${i + 1}.cpuprofile`) : undefined,
        }))),
      /** Ends it: CPU time and RSS of each instance over the window. */
      usageEnd: () => Promise.all(processes.map((p) => p.call({ type: 'usage-end' }))),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
