/** Parsing of a `Cookie` request header (RFC 6265 as browsers actually send it). */

/**
 * Every value of the cookie `name` in a Cookie header, in header order. Values are trimmed, unquoted and
 * percent-decoded (left raw when they are not valid percent-encoding); a browser may send one name twice
 * (for example a host-only and a domain cookie), hence a list.
 */
export function cookieValues(header: string | readonly string[] | null | undefined, name: string): string[] {
  // Typed callers pass a string or strings; anything else (from untyped code) holds no cookie rather than throwing.
  const given: unknown = header;
  const text = typeof given === 'string' ? given : Array.isArray(given) ? given.filter((v) => typeof v === 'string').join('; ') : '';
  if (!text) return [];
  const values: string[] = [];
  for (const pair of text.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue; // a bare value without a name cannot be ours
    if (pair.slice(0, eq).trim() !== name) continue;
    values.push(decodeValue(pair.slice(eq + 1).trim()));
  }
  return values;
}

function decodeValue(raw: string): string {
  const unquoted = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!unquoted.includes('%')) return unquoted;
  try {
    return decodeURIComponent(unquoted);
  } catch {
    return unquoted;
  }
}
