/** The loader's own cookies, all written with the same attributes so one removal finds them. */
import { domainCandidates, probeCookieDomain, type SetCookie } from './cookie-domain';
import { writeCookie } from './safe-storage';

/** Writes and deletes first-party cookies: Path=/, SameSite=Lax, Secure on https, Domain probed once on first write. */
export function loaderCookies(loc: Location) {
  let probed: string | undefined | null = null;
  const set: SetCookie = (name, value, seconds, domain) =>
    writeCookie(
      `${name}=${value};path=/;max-age=${seconds}${domain ? ';domain=' + domain : ''};samesite=lax${loc.protocol === 'https:' ? ';secure' : ''}`,
    );
  return {
    /** Writes a cookie (the value must be cookie-safe: URL-encode it) that lives `seconds` seconds. */
    write(name: string, value: string, seconds: number): void {
      if (probed === null) probed = probeCookieDomain(loc.hostname, set);
      set(name, value, seconds, probed);
    },
    /** Deletes a cookie whatever domain it was written with: host-only or any parent domain. */
    remove(name: string): void {
      for (const domain of [undefined, ...domainCandidates(loc.hostname)]) set(name, '', 0, domain);
    },
  };
}

/** The writer half of loaderCookies, as the modules that store something take it. */
export type WriteCookie = ReturnType<typeof loaderCookies>['write'];
