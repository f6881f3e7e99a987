/** The Domain attribute of the loader's cookies: the widest parent domain of the page host that accepts a cookie. */
import { readCookie } from './safe-storage';

const PROBE_COOKIE = 'cnv_probe';

/** Sets a cookie for `seconds` seconds (0 deletes it) on `domain`, or host-only without one. */
export type SetCookie = (name: string, value: string, seconds: number, domain?: string) => void;

/**
 * Domains a cookie of `host` may name, shortest first (`example.com` before `www.example.com`); none for localhost and
 * IP addresses, whose cookies stay host-only.
 */
export function domainCandidates(host: string): string[] {
  if (!host.includes('.') || /^[\d.]+$|:/.test(host)) return [];
  const labels = host.split('.');
  return labels.slice(1).map((_, i) => labels.slice(-2 - i).join('.'));
}

/**
 * Finds the widest domain that accepts a cookie by setting a probe cookie on each candidate from the shortest: the
 * browser rejects public suffixes (`co.uk`), so the first that sticks is the registrable domain. Undefined: host-only.
 */
export function probeCookieDomain(host: string, set: SetCookie): string | undefined {
  return domainCandidates(host).find((domain) => {
    set(PROBE_COOKIE, domain, 9, domain);
    const accepted = readCookie(PROBE_COOKIE) === domain;
    set(PROBE_COOKIE, '', 0, domain);
    return accepted;
  });
}
