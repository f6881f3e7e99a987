/** The Domain attribute of the loader's cookies: the widest parent domain of the page host that accepts a cookie. */
import { readCookie } from './read-cookie';

const PROBE_COOKIE = 'cnv_probe';

/** Sets a cookie for `seconds` seconds (0 deletes it) on `domain`, or host-only without one. */
export type SetCookie = (name: string, value: string, seconds: number, domain?: string) => void;

/**
 * Domains a cookie of `host` may name, shortest first (`example.com` before `www.example.com`); none for localhost and
 * IP addresses, whose cookies stay host-only.
 */
export function domainCandidates(host: string): string[] {
  const candidates: string[] = [];
  if (/^[\d.]+$|:/.test(host)) return candidates;
  // Drop one label at a time while a dot remains: a.example.com, example.com (a lone `com` names no domain).
  for (let domain = host; domain.includes('.'); domain = domain.slice(domain.indexOf('.') + 1)) candidates.unshift(domain);
  return candidates;
}

/**
 * Finds the widest domain that accepts a cookie by setting a probe cookie on each candidate (shortest first): the
 * browser rejects public suffixes (`co.uk`), so the first that sticks is the registrable domain. Undefined: host-only.
 */
export function probeCookieDomain(candidates: string[], set: SetCookie): string | undefined {
  return candidates.find((domain) => {
    set(PROBE_COOKIE, domain, 9, domain);
    const accepted = readCookie(PROBE_COOKIE) === domain;
    set(PROBE_COOKIE, '', 0, domain);
    return accepted;
  });
}
