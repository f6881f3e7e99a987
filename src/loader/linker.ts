/**
 * The cross-domain linker (data-linker): a site on two registrable domains carries the touch and the correlation token
 * from one to the other in the `_cnv` query parameter of the link the visitor follows, valid for two minutes.
 */
import type { Touch } from '../protocol/collector';
import { isCorrelationToken } from '../protocol/cookies';
import { LINKER_PARAM, LINKER_TTL_SECONDS } from '../protocol/signals';

/** What `_cnv` carries: the touch and the token (either may be absent). */
export interface Carried {
  touch: Touch | null;
  token: string | undefined;
}

/** The domains a data-linker value lists, separated by spaces or commas, lower-case (none for null or ''). */
export const linkerDomains = (value: string | null): string[] => {
  return (value || '').toLowerCase().split(/[\s,]+/).filter(Boolean);
};

/** Whether url is an http(s) URL on one of the (lower-case) domains or a subdomain of one. */
export const linksTo = (url: URL, domains: string[]): boolean => {
  return /^https?:$/.test(url.protocol) && domains.some((domain) => ('.' + url.hostname).endsWith('.' + domain));
};

/** Adds `_cnv` to url: `[expiry in epoch seconds, token or null, touch or null]` as JSON (URLSearchParams encodes it). */
export const addLinker = (url: URL, carried: Carried, nowMs: number): void => {
  url.searchParams.set(LINKER_PARAM, JSON.stringify([nowMs / 1000 + LINKER_TTL_SECONDS, carried.token || null, carried.touch]));
};

/**
 * What a `_cnv` value carries, or null when it has expired, expires later than one written now would (so a link cannot
 * be crafted to last), or is not one the loader wrote.
 */
export const readLinker = (value: string, nowMs: number): Carried | null => {
  try {
    const carried = JSON.parse(value);
    const left = carried[0] - nowMs / 1000;
    const token = carried[1];
    const touch = carried[2];
    return left > 0 && left <= LINKER_TTL_SECONDS && (!token || isCorrelationToken(token))
      ? { token: token || undefined, touch: touch && touch.click_ids && touch.utm ? touch : null }
      : null;
  } catch {
    return null;
  }
};

/** Removes `_cnv` from the address bar (history.replaceState: no navigation, no new history entry). */
export const removeLinkerFromAddress = (): void => {
  const url = new URL(location.href);
  url.searchParams.delete(LINKER_PARAM);
  history.replaceState(history.state, '', url.href);
};
