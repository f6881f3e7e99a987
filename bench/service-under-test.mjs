/**
 * The real service for the server benchmarks, started in this process on a fresh embedded PGlite, and set up the way a
 * user would: the site's domain through PATCH /v1/sites, a Google Ads destination through its hosted handoff (sign in
 * with Google, here the fake's OAuth server, then the customer id; deliveries go through the Data Manager API), the API
 * trigger source through its hosted page (the webhook secret is read from that page, the only place it appears), and
 * a live flow through POST /v1/flows and publish.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importTs } from './support/ts-module.mjs';
import { freePort } from './support/free-port.mjs';

/** The page origin the benchmark's site accepts. */
export const SITE_ORIGIN = 'http://www.example.com';
/** The trigger key of the benchmark's flow. */
export const TRIGGER_KEY = 'bench_signup';
/** The Google Ads customer and conversion action the flow delivers to (the fake Google accepts any digits). */
export const GOOGLE_ADS_CUSTOMER_ID = '1234567890';
export const GOOGLE_ADS_CONVERSION_ID = '987654321';

/**
 * The rate limits of the service under test. The load comes from one address at thousands of requests a second, which
 * the limits (docs/limits.md#rate-limits) would refuse: off unless `BENCH_RATE_LIMITS=on`, which measures with them at
 * their defaults or at the CNV_RATE_LIMIT_* values of the bench's environment (e.g. raised ones).
 */
function rateLimitSettings() {
  if (process.env.BENCH_RATE_LIMITS !== 'on') return { CNV_RATE_LIMITS: 'off' };
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CNV_RATE_LIMIT_')));
}

/**
 * Starts the service with `env` settings on top of the benchmark's; returns it with its REST helper. With
 * `bootstrapped`, the store (a PostgreSQL another instance already set up) has its account: no API key is expected.
 */
export async function startServiceUnderTest(env = {}, { bootstrapped = false } = {}) {
  const { startService, loadSettings } = await importTs(['src/server/service.ts', 'src/server/settings.ts']);
  const dataDir = mkdtempSync(join(tmpdir(), 'cnv-bench-'));
  const port = await freePort();
  const settings = loadSettings({
    HOST: '127.0.0.1',
    PORT: String(port),
    CNV_DATA_DIR: dataDir,
    CNV_DEMO_PORT: 'off',
    // Request logs at info level for tens of thousands of requests would flood the terminal; warnings still show.
    LOG_LEVEL: 'warn',
    ...rateLimitSettings(),
    ...env,
  });
  const service = await startService(settings);
  if (!service.apiKey && !bootstrapped) throw new Error('the fresh store was not bootstrapped: no API key');
  const base = service.urls.listening;
  const auth = { authorization: `Bearer ${service.apiKey}` };

  async function rest(method, path, body) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  return {
    service,
    settings,
    dataDir,
    base,
    site: service.site,
    rest,
    /** Counts rows of a table for the site (a read-only check after a run, straight from the service's database). */
    async countRows(table, siteId = service.site.id) {
      if (!/^[a-z_]+$/.test(table)) throw new Error(`bad table name ${table}`);
      const [row] = await service.db.query(`select count(*)::int as n from ${table} where site_id = $1`, [siteId]);
      return row.n;
    },
    /** How many of `values` appear in `column` of the site's rows of `table` (the exact "nothing lost" check). */
    async countPresent(table, column, values, siteId = service.site.id) {
      if (!/^[a-z_]+$/.test(table) || !/^[a-z_]+$/.test(column)) throw new Error(`bad table or column ${table}.${column}`);
      let present = 0;
      // In slices, so no single statement carries an enormous parameter.
      for (let i = 0; i < values.length; i += 5000) {
        const [row] = await service.db.query(
          `select count(*)::int as n from ${table} where site_id = $1 and ${column} = any($2::text[])`,
          [siteId, values.slice(i, i + 5000)],
        );
        present += row.n;
      }
      return present;
    },
    async close() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Sets the site's domain so the collector accepts snapshots from SITE_ORIGIN. */
export async function setSiteDomain(sut, origin = SITE_ORIGIN) {
  return sut.rest('PATCH', `/v1/sites/${sut.site.id}`, { domain: origin });
}

/**
 * Connects Google Ads through its hosted handoff (the sign-in with Google's OAuth, which the fake consents to at once,
 * then the customer id), connects the API trigger source (secret read from its page) and publishes a flow from the
 * API trigger to Google Ads. Returns the webhook secret.
 */
export async function setUpWebhookFlow(sut) {
  const { completeDestinationHandoff, submitHostedForm, localHandoffUrl, webhookSecretOnPage } = await importTs('src/demo/hosted-handoff.ts');
  const destination = await sut.rest('POST', '/v1/handoffs', { purpose: 'connect_destination', destination_type: 'google-ads' });
  await completeDestinationHandoff(destination.url, sut.base, { customer_id: GOOGLE_ADS_CUSTOMER_ID });
  const polled = await sut.rest('GET', `/v1/handoffs/${destination.id}`);
  if (polled.status !== 'completed') throw new Error(`destination handoff is ${polled.status} after its page was submitted`);

  const source = await sut.rest('POST', '/v1/handoffs', { purpose: 'connect_trigger_source', site_id: sut.site.id });
  const page = await submitHostedForm(localHandoffUrl(source.url, sut.base), {});
  const secret = webhookSecretOnPage(page);
  if (!secret) throw new Error('the trigger source page shows no webhook secret');

  const flow = await sut.rest('POST', '/v1/flows', {
    site_id: sut.site.id,
    name: 'Benchmark signups to Google Ads',
    trigger_config: { type: 'saas_signup', integrationId: 'api', key: TRIGGER_KEY },
    actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: GOOGLE_ADS_CONVERSION_ID } } }],
  });
  await sut.rest('POST', `/v1/flows/${flow.id}/publish`);
  return { secret, flowId: flow.id };
}
