/** Decoding one part of a URL (a path segment, a query name or value) as text. */

/**
 * A URL component decoded, `+` read as a space when `formEncoded` (a query's names and values), or null when its
 * percent escapes are not UTF-8 (`%zz`, a lone `%`, `%C0%AF`): each caller says what such a part is to it.
 */
export function decodeUrlComponent(raw: string, formEncoded = false): string | null {
  try {
    return decodeURIComponent(formEncoded ? raw.replaceAll('+', ' ') : raw);
  } catch {
    return null;
  }
}
