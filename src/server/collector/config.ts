/** The collector's rules: a site's public loader config and which request origins may send it snapshots. */
import type { SiteConfig } from '../../protocol/collector';
import { originMatchesDomain } from '../../protocol/origin';
import { ApiError } from '../http/errors';
import type { SiteRow } from '../api/sites';

/** The public config of a site, as the loader reads it. */
export function siteConfigOf(site: SiteRow): SiteConfig {
  return {
    site_key: site.site_key,
    domain: site.domain,
    correlation_ttl_seconds: site.correlation_ttl_seconds,
    honor_gpc: site.honor_gpc,
  };
}

/** 404 for a site key that names no site. */
export function siteNotFound(siteKey: string): ApiError {
  return new ApiError(404, 'not_found_error', 'site_not_found', `No site with key '${siteKey}'.`, 'site_key');
}

/** Whether a request Origin may send snapshots to a site: the loader's own rule (same origin or a subdomain). */
export function originAllowed(site: SiteRow, origin: string | undefined): boolean {
  return originMatchesDomain(site.domain, origin);
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
