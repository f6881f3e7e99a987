/** Validation of a site's editable fields (name, domain, timezone), shared by the REST API and the `cnv` command. */
import { parse as parseHost } from 'tldts';
import { invalidParam, printable } from '../../http/errors';
import { nonEmptyString } from '../../http/input';
import { SITE_NAME_MAX } from './schemas';

export { SITE_NAME_MAX, CORRELATION_TTL_RANGE } from './schemas';

/** A site name: a non-empty string of at most 200 characters, trimmed. */
export function parseSiteName(value: unknown, param = 'name'): string {
  return nonEmptyString(value, param, SITE_NAME_MAX);
}

/**
 * A host as the URL parser writes it: a host name (dot-separated labels of 1 to 63 letters, digits, hyphens or
 * underscores, none empty, none starting or ending with a hyphen; punycode for international names), an IPv4
 * address, or a bracketed IPv6 address. `*.example.com`, `example..com` and `example.com;x` are not hosts, though
 * the URL parser lets them through.
 */
const HOST = /^(?:(?!-)[a-z0-9_-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9_-]{1,63}(?<!-))*|\[[0-9a-f:.]+\])$/;

/**
 * A site domain: a bare http(s) origin (scheme, host, optional port) returned in canonical form (lower case,
 * punycode host, default port dropped), or null to clear it. Anything else is a 400 that says what is wrong, quoting
 * the input only in printable form.
 */
export function parseSiteDomain(value: unknown, param = 'domain'): string | null {
  if (value === null) return null;
  const example = 'a bare origin such as https://www.example.com';
  if (typeof value !== 'string') throw invalidParam(param, `${param} must be ${example}, or null to clear it.`);
  const raw = value.trim();
  if (raw.length > 300) throw invalidParam(param, `${param} is too long to be an origin.`);
  const parts = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/is.exec(raw);
  if (!parts) throw invalidParam(param, `${param} must be ${example}: scheme (http or https), host and optional port.`);
  const [, scheme, authority, rest] = parts as unknown as [string, string, string, string];
  const shown = printable(authority);
  if (!/^https?$/i.test(scheme)) throw invalidParam(param, `${param} must use the http or https scheme (got '${printable(scheme)}').`);
  if (authority.includes('@')) throw invalidParam(param, `${param} must not contain user info (user:password@).`);
  if (rest === '/') throw invalidParam(param, `${param} must not end with a slash: use ${scheme}://${shown}.`);
  if (rest.startsWith('/')) throw invalidParam(param, `${param} must not contain a path (got '${printable(rest)}'): use ${scheme}://${shown}.`);
  if (rest.startsWith('?')) throw invalidParam(param, `${param} must not contain a query string.`);
  if (rest.startsWith('#')) throw invalidParam(param, `${param} must not contain a fragment.`);
  // The URL parser drops tabs and newlines and reads a backslash as a slash: refuse them here, before it can.
  if (/[\s\u0000-\u001f\u007f-\u009f\\]/.test(authority)) {
    throw invalidParam(param, `${param} has an invalid host: '${shown}' holds a space, a control character or a backslash.`);
  }
  let url: URL | null = null;
  try {
    // The URL parser lower-cases, punycodes an international host and drops a default port, as browsers send Origin.
    url = new URL(`${scheme}://${authority}`);
  } catch {
    url = null;
  }
  const host = url?.hostname.replace(/\.$/, '') ?? '';
  // A DNS name's parts are 1 to 63 characters, the whole at most 253: said as such rather than as "invalid".
  if (url && host.split('.').some((label) => label.length > 63)) {
    throw invalidParam(param, `${param} has a host name with a part longer than 63 characters, which no DNS name has: '${printable(host, 80)}'.`);
  }
  if (url && host.length > 253) throw invalidParam(param, `${param} has a host name longer than 253 characters, which no DNS name has.`);
  if (!url || !authority || !HOST.test(host) || url.port === '0') {
    throw invalidParam(param, `${param} has an invalid host or port: '${shown}'.`);
  }
  // A public suffix (co.uk, github.io) is no one's site: as a domain it would accept every site under it.
  const suffix = parseHost(host, { allowPrivateDomains: true });
  if (!suffix.isIp && suffix.domain === null && (suffix.isIcann || suffix.isPrivate)) {
    throw invalidParam(
      param,
      `${param} '${host}' is a public suffix, under which every site has its own owner (a site domain accepts its subdomains): use your site's own origin, such as ${url.protocol}//www.yoursite.${host}.`,
    );
  }
  return `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}`;
}

let zones: Map<string, string> | undefined;

/** IANA names this runtime knows, keyed lower-case to their proper spelling. */
function knownZones(): Map<string, string> {
  zones ??= new Map(Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone]));
  return zones;
}

/**
 * An IANA timezone name in its proper spelling. The runtime's list holds canonical names; other IANA names it
 * accepts (`UTC`, `Etc/GMT+5`, links such as `US/Eastern`) are accepted too. UTC offsets such as `+05:00` are not names.
 */
export function parseTimezone(value: unknown, param = 'timezone'): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidParam(param, `${param} must be an IANA timezone name such as America/New_York or Europe/Berlin.`);
  }
  const name = value.trim();
  const listed = knownZones().get(name.toLowerCase());
  if (listed) return listed;
  if (/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) {
    try {
      const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
      // Keep the name the user chose (a link stays a link); only fix its letter case when that is all that differs.
      return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
    } catch {
      // falls through to the error below
    }
  }
  throw invalidParam(param, `${param} '${printable(name)}' is not an IANA timezone name (for example America/New_York, Europe/Berlin or UTC).`);
}
