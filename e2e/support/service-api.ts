/** The few REST calls the global setup makes to the real service to prepare the test sites (Bearer API key). */
import type { E2ESite } from './env';

interface SiteRecord {
  id: string;
  site_key: string;
  domain: string | null;
}

async function call<T>(base: string, apiKey: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

function toSite(record: SiteRecord): E2ESite {
  return { id: record.id, key: record.site_key, domain: record.domain };
}

/** Creates a site through POST /v1/sites and sets its domain through PATCH /v1/sites/{id}, as a customer would. */
export async function createSite(base: string, apiKey: string, name: string, domain: string | null): Promise<E2ESite> {
  const created = await call<SiteRecord>(base, apiKey, 'POST', '/v1/sites', { name });
  if (domain === null) return toSite(created);
  return setDomain(base, apiKey, created.id, domain);
}

/** Sets a site's domain through PATCH /v1/sites/{id}; the answer must carry it back normalised. */
export async function setDomain(base: string, apiKey: string, siteId: string, domain: string | null): Promise<E2ESite> {
  const updated = await call<SiteRecord>(base, apiKey, 'PATCH', `/v1/sites/${encodeURIComponent(siteId)}`, { domain });
  if (updated.domain !== domain) throw new Error(`PATCH /v1/sites/${siteId} stored domain ${updated.domain}, expected ${domain}`);
  return toSite(updated);
}

/** The public loader config of a site, as the loader fetches it. */
export async function collectorConfig(base: string, siteKey: string): Promise<{ domain: string | null; honor_gpc: boolean }> {
  const res = await fetch(`${base}/collect/v1/sites/${encodeURIComponent(siteKey)}/config`);
  if (!res.ok) throw new Error(`GET config of ${siteKey} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { domain: string | null; honor_gpc: boolean };
}

/** Turns off honor_gpc for a site through the REST API (PATCH {honor_gpc:false}) and checks the public config says so. */
export async function disableGpc(base: string, apiKey: string, site: E2ESite): Promise<E2ESite> {
  await call<SiteRecord>(base, apiKey, 'PATCH', `/v1/sites/${encodeURIComponent(site.id)}`, { honor_gpc: false });
  const config = await collectorConfig(base, site.key);
  if (config.honor_gpc !== false) throw new Error(`PATCH honor_gpc:false did not reach the loader config of ${site.key}`);
  return site;
}

/** A JSON REST call to the service with the API key (throws with the answer on any non-2xx). */
export function apiCall<T>(base: string, apiKey: string, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<T> {
  return call<T>(base, apiKey, method, path, body);
}

interface HandoffRecord {
  id: string;
  url: string;
  status: string;
}

/** The Google Ads customer id the browser tests connect (the fake accepts any). */
export const E2E_GOOGLE_CUSTOMER_ID = '1234567890';

/** The Google Ads conversion action the flows upload to. */
export const E2E_GOOGLE_CONVERSION_ID = '987654321';

/** The trigger key of the API trigger of the flows. */
export const E2E_TRIGGER_KEY = 'signup';

/**
 * Connects google-ads for the account through a hosted handoff, as a person does: the OAuth sign-in (against the
 * fake Google, which consents at once) then the account form. Checks the handoff completed.
 */
export async function connectGoogleAdsDestination(
  base: string,
  apiKey: string,
  connect: (fetchService: (pathAndQuery: string, init?: RequestInit) => Promise<Response>, hostedUrl: string, form: Record<string, string>) => Promise<{ status: number; html: string }>,
): Promise<void> {
  const handoff = await call<HandoffRecord>(base, apiKey, 'POST', '/v1/handoffs', { purpose: 'connect_destination', destination_type: 'google-ads' });
  const done = await connect((pathAndQuery, init) => fetch(`${base}${pathAndQuery}`, init), handoff.url, { customer_id: E2E_GOOGLE_CUSTOMER_ID });
  if (done.status !== 200) throw new Error(`the google-ads handoff form answered ${done.status}: ${done.html.slice(0, 500)}`);
  const after = await call<HandoffRecord>(base, apiKey, 'GET', `/v1/handoffs/${encodeURIComponent(handoff.id)}`);
  if (after.status !== 'completed') throw new Error(`the google-ads handoff is ${after.status}, expected completed`);
}

/**
 * Connects the API trigger source of a site through its hosted handoff (a POST with no fields to the hosted page's
 * path) and returns the webhook secret the page shows once.
 */
export async function connectApiTriggerSource(base: string, apiKey: string, siteId: string): Promise<string> {
  const handoff = await call<HandoffRecord>(base, apiKey, 'POST', '/v1/handoffs', { purpose: 'connect_trigger_source', site_id: siteId });
  const res = await fetch(`${base}${new URL(handoff.url).pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  });
  const html = await res.text();
  const secret = /whsec_[A-Za-z0-9]{32}/.exec(html)?.[0];
  if (!res.ok || !secret) throw new Error(`the trigger-source page of ${siteId} answered ${res.status} without a secret: ${html.slice(0, 500)}`);
  return secret;
}

/** Creates and publishes the site's signup flow: the API trigger `signup` → the Google Ads conversion action. */
export async function publishSignupFlow(base: string, apiKey: string, siteId: string): Promise<string> {
  const flow = await call<{ id: string }>(base, apiKey, 'POST', '/v1/flows', {
    site_id: siteId,
    name: 'Signups to Google Ads',
    trigger_config: { type: 'saas_signup', integrationId: 'api', key: E2E_TRIGGER_KEY },
    actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: E2E_GOOGLE_CONVERSION_ID } } }],
  });
  const published = await call<{ status: string }>(base, apiKey, 'POST', `/v1/flows/${encodeURIComponent(flow.id)}/publish`);
  if (published.status !== 'live') throw new Error(`the flow of ${siteId} is ${published.status} after publish, expected live`);
  return flow.id;
}

/**
 * Creates and publishes a form-trigger flow of a site: a successful submission of `integration`'s forms on the pages
 * `pageFilter` matches → the Google Ads conversion action. Returns the flow id.
 */
export async function publishFormFlow(base: string, apiKey: string, siteId: string, integration: string, pageFilter: string): Promise<string> {
  const flow = await call<{ id: string }>(base, apiKey, 'POST', '/v1/flows', {
    site_id: siteId,
    name: `${integration} forms (${pageFilter}) to Google Ads`,
    trigger_config: { integrationId: integration, pageFilter },
    actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: E2E_GOOGLE_CONVERSION_ID } } }],
  });
  const published = await call<{ status: string }>(base, apiKey, 'POST', `/v1/flows/${encodeURIComponent(flow.id)}/publish`);
  if (published.status !== 'live') throw new Error(`the ${integration} form flow of ${siteId} is ${published.status} after publish, expected live`);
  return flow.id;
}
