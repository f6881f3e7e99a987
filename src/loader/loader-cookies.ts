/** The loader's own cookies, all written with the same attributes so one removal finds them. */
import { domainCandidates, probeCookieDomain, type SetCookie } from './cookie-domain';
import { guard } from './guard';

/**
 * Sets one of the loader's cookies for `seconds` seconds (the value must be cookie-safe: URL-encode it); 0 deletes it
 * whatever domain it was written with, host-only or any parent domain.
 */
export type WriteCookie = (name: string, value: string, seconds: number) => void;

/**
 * The loader's cookie writer for this page: Path=/, SameSite=Lax, Secure on https, Domain probed once on first write.
 * Does nothing when cookies cannot be written (private modes make document.cookie throw).
 */
export function loaderCookies(loc: Location): WriteCookie {
  const domains = domainCandidates(loc.hostname);
  let probed: string | undefined | null = null;
  const set: SetCookie = guard((name, value, seconds, domain) => {
    document.cookie = `${name}=${value};path=/;max-age=${seconds}${domain ? ';domain=' + domain : ''};samesite=lax${loc.protocol === 'https:' ? ';secure' : ''}`;
  });
  return (name, value, seconds) => {
    if (!seconds) return [undefined, ...domains].forEach((domain) => set(name, '', 0, domain));
    if (probed === null) probed = probeCookieDomain(domains, set);
    set(name, value, seconds, probed);
  };
}
