/** The collector's rules: a site's public loader config and which request origins may send it snapshots. */
import type { SiteConfig } from '../../protocol/collector';
import { isFormIntegration, type FormWatch } from '../../protocol/forms';
import { originMatchesDomain } from '../../protocol/origin';
import { parsePageFilter } from '../../protocol/page-filter';
import type { Queryable } from '../db/db';
import { ApiError } from '../http/errors';
import type { SiteRow } from '../api/sites';
import { cookieDomainOf } from './cookie-domain';
import { liveFormTriggerConfigs } from '../api/flows';

/** What `GET /collect/v1/sites/{site_key}/config` answers (DESIGN.md, Boot). */
export type LoaderConfig = SiteConfig & { cookie_domain: string | null; forms: FormWatch[] };

/** The public config of a site, as the loader reads it, given the form integrations its live flows watch. */
export function siteConfigOf(site: SiteRow, forms: FormWatch[] = []): LoaderConfig {
  return {
    site_key: site.site_key,
    domain: site.domain,
    cookie_domain: cookieDomainOf(site.domain),
    correlation_ttl_seconds: site.correlation_ttl_seconds,
    honor_gpc: site.honor_gpc,
    forms,
  };
}

/** The public config of a site, reading the form triggers of its live flows. */
export async function loadSiteConfig(db: Queryable, site: SiteRow): Promise<LoaderConfig> {
  return siteConfigOf(site, formWatchesOf(await liveFormTriggerConfigs(db, site.id)));
}

/**
 * The config's `forms` from live form triggers `{integrationId, pageFilter}`: one entry per distinct (integration, page
 * filter), in flow order. A trigger the loader could not act on (an unknown integration, an invalid filter) is left out.
 */
export function formWatchesOf(triggers: readonly Record<string, unknown>[]): FormWatch[] {
  const watches = new Map<string, FormWatch>();
  for (const trigger of triggers) {
    const filter = parsePageFilter(trigger.pageFilter);
    if (!isFormIntegration(trigger.integrationId) || !filter.ok) continue;
    const watch: FormWatch = { integration: trigger.integrationId, page_filter: filter.filter };
    watches.set(JSON.stringify([watch.integration, watch.page_filter]), watch);
  }
  return [...watches.values()];
}

/** 404 for a site key that names no site. */
export function siteNotFound(siteKey: string): ApiError {
  return new ApiError(404, 'not_found_error', 'site_not_found', `No site with key '${siteKey}'.`, 'site_key');
}

/**
 * originMatchesDomain's answers by domain and origin. Every snapshot asks with its Origin header, and each answer costs
 * two URL parses (4 % of the HTTP thread under the ingest benchmark, asked twice per snapshot): a site's pages come
 * from a few origins, so the same few questions repeat. Bounded in count (emptied when full: refused origins from
 * anywhere cannot grow it) and in size: an Origin header longer than any real origin (a header may be kilobytes) is
 * answered without being remembered, so the map stays under a few megabytes whatever is sent.
 */
const originAnswers = new Map<string, boolean>();
export const MAX_ORIGIN_ANSWERS = 10_000;
export const MAX_REMEMBERED_ORIGIN_LENGTH = 256;

/** How many answers originAllowed holds (tests). */
export function rememberedOriginAnswers(): number {
  return originAnswers.size;
}

/** Whether a request Origin may send snapshots to a site: the loader's own rule (same origin or a subdomain). */
export function originAllowed(site: Pick<SiteRow, 'domain'>, origin: string | undefined): boolean {
  if (site.domain === null || origin === undefined) return false;
  if (origin.length > MAX_REMEMBERED_ORIGIN_LENGTH) return originMatchesDomain(site.domain, origin);
  // A saved domain is a bare origin (no space), so the first space separates the two.
  const key = `${site.domain} ${origin}`;
  let allowed = originAnswers.get(key);
  if (allowed === undefined) {
    allowed = originMatchesDomain(site.domain, origin);
    if (originAnswers.size >= MAX_ORIGIN_ANSWERS) originAnswers.clear();
    originAnswers.set(key, allowed);
  }
  return allowed;
}

/** 403 for a request whose Origin the site does not accept, saying why. */
export function originRefused(site: SiteRow, origin: string | undefined): ApiError {
  const message = !origin
    ? 'No Origin header: snapshots are accepted only from pages of the site, sent by the loader.'
    : site.domain === null
      ? `Origin '${origin}' is not allowed: the site has no domain set (set it with PATCH /v1/sites/{id}).`
      : `Origin '${origin}' is not allowed: the site accepts ${site.domain} and its subdomains only.`;
  return new ApiError(403, 'permission_error', 'origin_not_allowed', message);
}
