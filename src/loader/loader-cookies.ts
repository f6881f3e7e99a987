/** The loader's own cookies, written through js-cookie, all with the same attributes so one removal finds them. */
import Cookies from 'js-cookie';

/**
 * Sets one of the loader's cookies for `seconds` seconds (js-cookie encodes the value); 0 deletes it, for the cookie
 * domain and host-only.
 */
export type WriteCookie = (name: string, value: string, seconds: number) => void;

/**
 * The loader's cookie writer for this page: Path=/; on https `SameSite=None; Secure`, so a single sign-on callback that
 * arrives as a cross-site POST (SAML POST binding, Sign in with Apple's form_post) still carries the token; on http
 * `SameSite=Lax` (browsers refuse None without Secure). Domain: the config's `cookie_domain`, the registrable domain of
 * the site's domain, which the service computes from the Public Suffix List and which the page's host is under (the
 * origin check passed), so app.example.com reads what www.example.com wrote; host-only when it is null (localhost, IP
 * addresses). Does nothing when cookies cannot be written (private modes make document.cookie throw).
 */
export const loaderCookies = (loc: Location, cookieDomain?: string | null): WriteCookie => {
  const https = loc.protocol === 'https:';
  const jar = Cookies.withAttributes({ sameSite: https ? 'None' : 'Lax', secure: https, domain: cookieDomain || undefined });
  return (name, value, seconds) => {
    try {
      if (seconds) return jar.set(name, value, { 'max-age': String(seconds) });
      // Host-only too: a cookie written before the site's domain was set, or by an earlier loader.
      jar.remove(name);
      jar.remove(name, { domain: undefined });
    } catch {
      // cookies blocked: the loader runs on without them
    }
  };
};
