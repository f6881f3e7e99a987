/**
 * A browser-like cookie jar behind document.cookie, for loader tests: it honours Domain (rejecting public suffixes and
 * foreign domains, like a browser's public suffix list), Max-Age (0 deletes) and records every raw write, so tests can
 * assert the attributes the loader sends and the domain it chose.
 * Max-Age (0 or less) or an Expires in the past deletes, as in a browser (js-cookie's remove() sends Expires).
 */
export interface JarCookie {
  name: string;
  value: string;
  /** Undefined for a host-only cookie. */
  domain: string | undefined;
  host: string;
  attributes: Record<string, string | true>;
}

export interface CookieJar {
  /** Every string assigned to document.cookie, in order. */
  writes: string[];
  /** The cookies currently stored (all hosts). */
  all(): JarCookie[];
  /** The stored cookie of that name visible to the current page, if any. */
  get(name: string): JarCookie | undefined;
  /** Puts document.cookie back to happy-dom's own. */
  restore(): void;
}

const visibleTo = (cookie: JarCookie, host: string) =>
  cookie.domain ? host === cookie.domain || host.endsWith(`.${cookie.domain}`) : host === cookie.host;

/** Installs the jar on document.cookie. `publicSuffixes` are domains the jar refuses, as browsers do. */
export function installCookieJar(publicSuffixes: string[] = ['com', 'co.uk', 'uk', 'test', 'github.io', 'io']): CookieJar {
  let cookies: JarCookie[] = [];
  const writes: string[] = [];
  const visible = () => cookies.filter((c) => visibleTo(c, location.hostname));
  Object.defineProperty(document, 'cookie', {
    configurable: true,
    get: () => visible().map((c) => `${c.name}=${c.value}`).join('; '),
    set: (raw: string) => {
      writes.push(raw);
      const [pair = '', ...rest] = raw.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const attributes: Record<string, string | true> = {};
      for (const part of rest) {
        const at = part.indexOf('=');
        const key = (at < 0 ? part : part.slice(0, at)).trim().toLowerCase();
        if (key) attributes[key] = at < 0 ? true : part.slice(at + 1).trim();
      }
      const host = location.hostname;
      const domainAttr = typeof attributes.domain === 'string' ? attributes.domain.replace(/^\./, '').toLowerCase() : undefined;
      if (domainAttr && (publicSuffixes.includes(domainAttr) || !(host === domainAttr || host.endsWith(`.${domainAttr}`)))) return;
      const domain = domainAttr;
      cookies = cookies.filter((c) => !(c.name === name && c.domain === domain && (domain || c.host === host)));
      const maxAge = attributes['max-age'];
      const expires = attributes.expires;
      if (typeof maxAge === 'string' && Number(maxAge) <= 0) return;
      if (maxAge === undefined && typeof expires === 'string' && Date.parse(expires) <= Date.now()) return;
      cookies.push({ name, value, domain, host, attributes });
    },
  });
  return {
    writes,
    all: () => cookies,
    get: (name) => visible().find((c) => c.name === name),
    restore: () => {
      delete (document as unknown as Record<string, unknown>).cookie;
    },
  };
}
