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
