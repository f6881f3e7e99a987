/** Origin rules shared by the loader (is this page active?), the collector (Origin header) and the site API (domain). */

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

interface OriginParts {
  scheme: string;
  host: string;
  port: string;
}

/** Splits a bare origin into lower-cased parts with the default port dropped; null when it is not an http(s) origin. */
export function parseOrigin(origin: string): OriginParts | null {
  const match = /^(https?:)\/\/([^/?#:@\s]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i.exec(origin.trim());
  if (!match) return null;
  const scheme = match[1]!.toLowerCase();
  const host = match[2]!.toLowerCase().replace(/\.$/, '');
  let port = match[3] ?? '';
  if (port) port = String(Number(port));
  if (port === DEFAULT_PORTS[scheme]) port = '';
  if (!host || (port && Number(port) > 65535)) return null;
  return { scheme, host, port };
}

/** The canonical spelling of a bare origin (lower case, no default port), or null when it is not one. */
export function normalizeOrigin(origin: string): string | null {
  const parts = parseOrigin(origin);
  if (!parts) return null;
  return `${parts.scheme}//${parts.host}${parts.port ? `:${parts.port}` : ''}`;
}

/**
 * Whether a page origin is covered by a site's domain: the same origin, or a subdomain of the domain's host,
 * with the same scheme and port. A null domain covers nothing. Uses the URL parser (lower-cased host, default port
 * dropped) so the browser bundle stays small; domains are validated as bare origins when they are saved.
 */
export function originMatchesDomain(domain: string | null | undefined, pageOrigin: string | null | undefined): boolean {
  try {
    const site = new URL(domain!);
    const page = new URL(pageOrigin!);
    return (
      /^https?:$/.test(site.protocol) &&
      site.protocol === page.protocol &&
      site.port === page.port &&
      // The same host or a subdomain of it: `www.example.com` is `example.com` with a label in front.
      ('.' + page.hostname).endsWith('.' + site.hostname)
    );
  } catch {
    // null, 'null' (opaque origins) and anything unparseable cover nothing
    return false;
  }
}
