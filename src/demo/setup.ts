/**
 * The first-run demo setup, run on every start and idempotent: it looks at what exists and creates only what is
 * missing. It takes the path a user takes: a site through the REST API, the Google Ads destination and the API trigger
 * source through hosted handoff pages, then a flow created and published through the REST API. Reads that the API
 * does not offer (is a destination connected? the site's current webhook secret) go to the store in process.
 */
import type { Database } from '../server/db/db';
import { findAccountByApiKey, issueApiKey, listAccounts, type Account } from '../server/accounts/sql';
import { connectedDestinationTypes } from '../server/destinations/sql';
import { activeWebhookSecrets } from '../server/webhook/secret-sql';
import { readCredentials, writeCredentials } from './credentials';
import { localHandoffUrl, submitHostedForm, webhookSecretOnPage } from './hosted-handoff';
import { ServiceApi, type FlowRecord, type HandoffRecord, type SiteRecord } from './service-api';

/** The names and ids the demo creates; a person finds them again through the API. */
export const DEMO = {
  siteName: 'Demo store',
  timezone: 'America/New_York',
  flowName: 'Demo signups',
  triggerKey: 'demo-signup',
  /** The Google Ads conversion action the demo flow fires. */
  conversionActionId: '987654321',
  /** The pretend Google Ads account connected through the hosted page. */
  googleAdsCustomerId: '123-456-7890',
  /** Stands for the token Google's OAuth step would give; the local fake accepts any bearer token. */
  googleAdsAccessToken: 'demo-oauth-access-token',
  apiKeyLabel: 'demo store backend',
} as const;

export interface DemoSetupOptions {
  db: Database;
  /** Base URL of the REST API and hosted pages, reachable from this process. */
  apiBase: string;
  /** The demo site's origin (its domain in cnv). */
  demoOrigin: string;
  /** Where the demo backend keeps its API key. */
  credentialsFile: string;
  log: { info(message: string): void };
}

/** What the demo backend needs, once set up. */
export interface DemoSetup {
  accountId: string;
  api: ServiceApi;
  site: SiteRecord;
  flow: FlowRecord;
  webhookSecret: string;
  /** What this run created (empty when everything existed). */
  created: string[];
}

async function ensureApiKey(options: DemoSetupOptions, created: string[]): Promise<{ account: Account; apiKey: string }> {
  const stored = readCredentials(options.credentialsFile);
  if (stored) {
    const account = await findAccountByApiKey(options.db, stored.api_key);
    if (account) return { account, apiKey: stored.api_key };
  }
  // The demo joins the first account (the one the first start created), so its printed key sees the demo's events too.
  const [account] = await listAccounts(options.db);
  if (!account) throw new Error('The database has no account yet: the service creates one on its first start, before the demo.');
  const { key } = await issueApiKey(options.db, account.id, DEMO.apiKeyLabel);
  writeCredentials(options.credentialsFile, { api_key: key });
  created.push('an API key for the demo backend');
  return { account, apiKey: key };
}

async function ensureSite(api: ServiceApi, demoOrigin: string, created: string[]): Promise<SiteRecord> {
  const sites = await api.listAll<SiteRecord>('/v1/sites');
  const site = sites.find((s) => s.domain === demoOrigin) ?? sites.find((s) => s.name === DEMO.siteName);
  if (!site) {
    created.push(`the site "${DEMO.siteName}"`);
    const made = await api.call<SiteRecord>('POST', '/v1/sites', { name: DEMO.siteName, timezone: DEMO.timezone });
    return api.call<SiteRecord>('PATCH', `/v1/sites/${encodeURIComponent(made.id)}`, { domain: demoOrigin });
  }
  if (site.domain !== demoOrigin) {
    // The demo port changed since the last start: the loader accepts only the site's domain.
    created.push(`the domain ${demoOrigin} of "${site.name}"`);
    return api.call<SiteRecord>('PATCH', `/v1/sites/${encodeURIComponent(site.id)}`, { domain: demoOrigin });
  }
  return site;
}

async function completeHandoff(api: ServiceApi, body: Record<string, unknown>, fields: Record<string, string>): Promise<string> {
  const handoff = await api.call<HandoffRecord>('POST', '/v1/handoffs', body);
  const page = await submitHostedForm(localHandoffUrl(handoff.url, api.baseUrl), fields);
  // Like the application that sent the user to the link, learn the outcome by polling the handoff.
  const after = await api.call<HandoffRecord>('GET', `/v1/handoffs/${encodeURIComponent(handoff.id)}`);
  if (after.status !== 'completed') throw new Error(`Handoff ${handoff.id} is still ${after.status} after its hosted page was completed.`);
  return page;
}

async function ensureDestination(options: DemoSetupOptions, api: ServiceApi, accountId: string, created: string[]): Promise<void> {
  if ((await connectedDestinationTypes(options.db, accountId)).has('google-ads')) return;
  await completeHandoff(
    api,
    { purpose: 'connect_destination', destination_type: 'google-ads' },
    { customer_id: DEMO.googleAdsCustomerId, access_token: DEMO.googleAdsAccessToken },
  );
  created.push(`a Google Ads destination (customer ${DEMO.googleAdsCustomerId})`);
}

async function ensureWebhookSecret(options: DemoSetupOptions, api: ServiceApi, site: SiteRecord, created: string[]): Promise<string> {
  const [current] = await activeWebhookSecrets(options.db, site.id);
  if (current) return current;
  const page = await completeHandoff(api, { purpose: 'connect_trigger_source', trigger_source: 'api', site_id: site.id }, {});
  // The backend takes the secret from the page it is shown on, once, as a user copies it.
  const secret = webhookSecretOnPage(page);
  if (!secret) throw new Error('The trigger source page did not show a webhook secret.');
  created.push(`the API trigger source of "${site.name}" and its webhook secret`);
  return secret;
}

function isDemoFlow(flow: FlowRecord): boolean {
  return flow.name === DEMO.flowName && flow.trigger_config.integrationId === 'api' && flow.trigger_config.key === DEMO.triggerKey;
}

async function ensureFlow(api: ServiceApi, site: SiteRecord, created: string[]): Promise<FlowRecord> {
  const flows = await api.listAll<FlowRecord>('/v1/flows', { site_id: site.id });
  let flow = flows.find(isDemoFlow);
  if (!flow) {
    flow = await api.call<FlowRecord>('POST', '/v1/flows', {
      site_id: site.id,
      name: DEMO.flowName,
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: DEMO.triggerKey },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: DEMO.conversionActionId } } }],
    });
    created.push(`the flow "${DEMO.flowName}"`);
  }
  if (flow.status !== 'live') {
    flow = await api.call<FlowRecord>('POST', `/v1/flows/${encodeURIComponent(flow.id)}/publish`);
    created.push(`published "${DEMO.flowName}"`);
  }
  return flow;
}

/** Makes sure the demo site, destination, trigger source and live flow exist; creates only what is missing. */
export async function ensureDemoSetup(options: DemoSetupOptions): Promise<DemoSetup> {
  const created: string[] = [];
  const { account, apiKey } = await ensureApiKey(options, created);
  const api = new ServiceApi(options.apiBase, apiKey);
  const site = await ensureSite(api, options.demoOrigin, created);
  await ensureDestination(options, api, account.id, created);
  const webhookSecret = await ensureWebhookSecret(options, api, site, created);
  const flow = await ensureFlow(api, site, created);
  if (created.length > 0) options.log.info(`demo setup created ${created.join(', ')}`);
  return { accountId: account.id, api, site, flow, webhookSecret, created };
}
