/** The Domain the loader writes its cookies for: the registrable domain of the site's domain, by the Public Suffix List. */
import { parse } from 'tldts';

/**
 * The registrable domain (eTLD+1) of a site's domain, e.g. `example.co.uk` for `https://www.example.co.uk`, so that
 * `app.` and `www.` share the loader's cookies. Private suffixes count (`github.io`, `herokuapp.com`), as browsers
 * refuse a cookie for them. Null when the domain is null, an IP address, localhost (or a `*.localhost` name), or a
 * public suffix itself: the loader then writes host-only cookies.
 */
export function cookieDomainOf(domain: string | null): string | null {
  if (!domain) return null;
  const parsed = parse(domain, { allowPrivateDomains: true });
  if (parsed.isIp || !parsed.hostname) return null;
  if (parsed.hostname === 'localhost' || parsed.hostname.endsWith('.localhost')) return null;
  return parsed.domain;
}
