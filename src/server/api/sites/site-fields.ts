/** Validation of a site's editable fields (name, domain, timezone), shared by the REST API and the `cnv` command. */
import { invalidParam } from '../../http/errors';
import { normalizeOrigin } from '../../../protocol/origin';
import { nonEmptyString } from '../../http/input';

/** Longest site name. */
export const SITE_NAME_MAX = 200;

/** A site name: a non-empty string of at most 200 characters, trimmed. */
export function parseSiteName(value: unknown, param = 'name'): string {
  return nonEmptyString(value, param, SITE_NAME_MAX);
}

/**
 * A site domain: a bare http(s) origin (scheme, host, optional port) returned in canonical form (lower case,
 * punycode host, default port dropped), or null to clear it. Anything else is a 400 that says what is wrong.
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
  if (!/^https?$/i.test(scheme)) throw invalidParam(param, `${param} must use the http or https scheme (got '${scheme}').`);
  if (authority.includes('@')) throw invalidParam(param, `${param} must not contain user info (user:password@).`);
  if (rest === '/') throw invalidParam(param, `${param} must not end with a slash: use ${scheme}://${authority}.`);
  if (rest.startsWith('/')) throw invalidParam(param, `${param} must not contain a path (got '${rest}'): use ${scheme}://${authority}.`);
  if (rest.startsWith('?')) throw invalidParam(param, `${param} must not contain a query string.`);
  if (rest.startsWith('#')) throw invalidParam(param, `${param} must not contain a fragment.`);
  let origin: string | null = null;
  try {
    // The URL parser lower-cases, punycodes an international host and drops a default port, as browsers send Origin.
    origin = normalizeOrigin(new URL(`${scheme}://${authority}`).origin);
  } catch {
    origin = null;
  }
  if (!origin || !authority) throw invalidParam(param, `${param} has an invalid host or port: '${authority}'.`);
  return origin;
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
  throw invalidParam(param, `${param} '${name}' is not an IANA timezone name (for example America/New_York, Europe/Berlin or UTC).`);
}

/** Shortest and longest correlation cookie lifetime a site may set, in seconds (1 minute to 1 day). */
export const CORRELATION_TTL_RANGE = { min: 60, max: 86_400 } as const;

/** Whether the loader honours Global Privacy Control for this site: a boolean. */
export function parseHonorGpc(value: unknown, param = 'honor_gpc'): boolean {
  if (typeof value !== 'boolean') throw invalidParam(param, `${param} must be true or false.`);
  return value;
}

/** The correlation cookie lifetime: whole seconds from 60 to 86400. */
export function parseCorrelationTtl(value: unknown, param = 'correlation_ttl_seconds'): number {
  const { min, max } = CORRELATION_TTL_RANGE;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidParam(param, `${param} must be a whole number of seconds from ${min} to ${max}.`);
  }
  return value;
}
