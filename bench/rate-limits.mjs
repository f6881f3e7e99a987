/**
 * What the rate limits cost on the hot path, measured side by side in one run: CPU per request of a route with the
 * limits' onRequest hook (two limiters, never exceeded) and of the same route without, through Fastify's inject; a
 * refused request's cost; and, with DATABASE_URL, one sync of N keys to PostgreSQL (the only database work, once a
 * second per process, off the request path).   node bench/rate-limits.mjs [requests=20000] [keys=10000]
 */
import Fastify from 'fastify';
import { importTs } from './support/ts-module.mjs';

const requests = Number(process.argv[2] ?? 20_000);
const syncKeys = Number(process.argv[3] ?? 10_000);
const { createRateLimits, loadSettings, openDatabase, migrate } = await importTs([
  'src/server/rate-limits/index.ts',
  'src/server/settings.ts',
  'src/server/db/db.ts',
  'src/server/db/migrations.ts',
]);

const settings = (env) => loadSettings({ CNV_SECRET_KEY: '5'.repeat(64), ...env });
const memoryDb = { kind: 'pglite' };

async function app(limited, env) {
  const fastify = Fastify({ trustProxy: true });
  const hook = limited ? await createRateLimits({ settings: settings(env), db: memoryDb }).hook(fastify, 'collector') : null;
  fastify.post('/collect/v1/sites/:site_key/snapshots', hook ? { onRequest: hook } : {}, async (_request, reply) => reply.code(204).send());
  fastify.setErrorHandler((error, _request, reply) => reply.code(error.status ?? 500).send({ error: error.code }));
  await fastify.ready();
  return fastify;
}

/** CPU µs per request of `n` injected requests, each from its own address when `spread` (else one address). */
async function cpuPerRequest(fastify, n, spread) {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const address = spread ? `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` : '203.0.113.7';
    await fastify.inject({ method: 'POST', url: `/collect/v1/sites/site${i % 50}/snapshots`, remoteAddress: address, payload: '' });
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const off = await app(false);
const on = await app(true, { CNV_RATE_LIMIT_COLLECTOR_PER_ADDRESS: '10000000', CNV_RATE_LIMIT_COLLECTOR_PER_SITE: '10000000' });
const refusing = await app(true, { CNV_RATE_LIMIT_COLLECTOR_PER_ADDRESS: '1' });
// Warm up, then alternate rounds so both see the same machine load.
await cpuPerRequest(off, 2000, true);
await cpuPerRequest(on, 2000, true);
const rounds = 5;
let offUs = 0;
let onUs = 0;
for (let r = 0; r < rounds; r++) {
  offUs += (await cpuPerRequest(off, requests / rounds, true)) / rounds;
  onUs += (await cpuPerRequest(on, requests / rounds, true)) / rounds;
}
await cpuPerRequest(refusing, 1, false);
const refusedUs = await cpuPerRequest(refusing, requests / rounds, false);
console.log(`route without limits     ${offUs.toFixed(1)} µs CPU per request`);
console.log(`route with both limits   ${onUs.toFixed(1)} µs CPU per request (+${(onUs - offUs).toFixed(1)} µs, ×${(onUs / offUs).toFixed(2)}), each request from a new address`);
console.log(`a refused request (429)  ${refusedUs.toFixed(1)} µs CPU (×${(refusedUs / offUs).toFixed(2)} of the 204, which has no body: a 429 costs what any JSON error answer costs; no body read, no query)`);

if (process.env.DATABASE_URL) {
  // A schema of its own, dropped at the end.
  const schema = `bench_rl_${process.pid}`;
  const admin = await openDatabase({ databaseUrl: process.env.DATABASE_URL });
  await admin.query(`create schema ${schema}`);
  const url = process.env.DATABASE_URL;
  const db = await openDatabase({ databaseUrl: `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}` });
  await migrate(db);
  const limits = createRateLimits({ settings: settings({}), db });
  const shared = Fastify();
  const hook = await limits.hook(shared, 'webhook');
  const request = (i) => ({ ip: `10.1.${(i >> 8) & 255}.${i & 255}`, params: { site_key: `site${i}` }, routeOptions: {} });
  for (let i = 0; i < syncKeys / 2; i++) await hook(request(i), { header() {} });
  for (const round of ['first (new rows)', 'second (the same keys again)']) {
    if (round.startsWith('second')) for (let i = 0; i < syncKeys / 2; i++) await hook(request(i), { header() {} });
    const started = process.hrtime.bigint();
    await limits.sync();
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    console.log(`PostgreSQL: ${round} sync of ${syncKeys} keys (add + read back): ${ms.toFixed(1)} ms, off the request path`);
  }
  await limits.stop();
  await shared.close();
  await db.close();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.close();
}
await Promise.all([off.close(), on.close(), refusing.close()]);
