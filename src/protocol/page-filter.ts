/**
 * The `pageFilter` of a form trigger: on which pages of the site a form submission counts. The service validates it
 * when a flow is published (parsePageFilter) and matches it against a submission's page_url (pageFilterMatches).
 *
 * Grammar, decided here once:
 * - `all` (any letter case, stored as `all`): every page.
 * - Otherwise a path pattern: starts with `/`, at most PAGE_FILTER_MAX_LENGTH characters, made of the characters a
 *   URL path may carry unencoded (letters, digits, `-._~!$&'()+,;=:@/`) plus `%XX` escapes and the wildcard `*`.
 *   No spaces, `?` or `#`: the query and the fragment of the page are ignored, so a filter never names them.
 * - `*` matches any run of characters, `/` included, or none: `/pricing/*` matches `/pricing/team` and
 *   `/pricing/a/b`, not `/pricing` itself; `/pricing*` matches `/pricing`, `/pricing/team` and `/pricing-old`.
 * - Without `*` the path must match exactly. Matching is case-sensitive, as URL paths are (`/Signup` is not `/signup`).
 * - One trailing slash is ignored on both sides (`/signup/` and `/signup` are the same page), except the root `/`.
 * - Percent escapes compare case-insensitively (`%c3%a9` is `%C3%A9`): browsers write them in upper case.
 * - Surrounding whitespace is trimmed; the parsed `filter` is the value to store.
 */

/** The filter matching every page. */
export const PAGE_FILTER_ALL = 'all';

/** Longest path pattern accepted, in characters. */
export const PAGE_FILTER_MAX_LENGTH = 256;

export type PageFilterParse = { ok: true; filter: string } | { ok: false; error: string };

/** Characters a pattern may hold besides `%XX` escapes (RFC 3986 pchar and `/`, plus the wildcard `*`). */
const PATTERN_CHAR = /[A-Za-z0-9\-._~!$&'()+,;=:@/*]/;

/** Checks a pageFilter and returns its stored form, or a plain-language error naming what to change. */
export function parsePageFilter(value: unknown): PageFilterParse {
  if (typeof value !== 'string') return { ok: false, error: 'The page filter must be text: "all" or a path such as "/signup".' };
  const filter = value.trim();
  if (filter.toLowerCase() === PAGE_FILTER_ALL) return { ok: true, filter: PAGE_FILTER_ALL };
  if (filter === '') return { ok: false, error: 'The page filter is empty: use "all" or a path such as "/signup".' };
  if (!filter.startsWith('/')) {
    return { ok: false, error: `The page filter "${filter}" must be "all" or a path starting with "/", such as "/signup" or "/pricing/*" (no domain).` };
  }
  if (filter.length > PAGE_FILTER_MAX_LENGTH) {
    return { ok: false, error: `The page filter is ${filter.length} characters long; at most ${PAGE_FILTER_MAX_LENGTH} are allowed.` };
  }
  for (let i = 0; i < filter.length; i++) {
    const c = filter[i]!;
    if (c === '%') {
      if (!/^%[0-9A-Fa-f]{2}$/.test(filter.slice(i, i + 3))) {
        return { ok: false, error: `The page filter has a "%" at position ${i + 1} that is not followed by two hexadecimal digits.` };
      }
      i += 2;
    } else if (c === '?' || c === '#') {
      return { ok: false, error: `The page filter cannot contain "${c}": the query and fragment of a page are ignored, so match on the path only.` };
    } else if (!PATTERN_CHAR.test(c)) {
      const shown = /\s/.test(c) ? 'a space' : `"${c}"`;
      return { ok: false, error: `The page filter cannot contain ${shown}; write such characters percent-encoded, as they appear in the address bar (a space is "%20").` };
    }
  }
  return { ok: true, filter };
}

/** Whether a submission made on pageUrl counts for filter; an invalid filter or URL matches nothing (`all` excepted). */
export function pageFilterMatches(filter: string, pageUrl: string): boolean {
  const parsed = parsePageFilter(filter);
  if (!parsed.ok) return false;
  if (parsed.filter === PAGE_FILTER_ALL) return true;
  let path: string;
  try {
    path = new URL(pageUrl).pathname;
  } catch {
    return false;
  }
  return globMatches(normalizePath(parsed.filter), normalizePath(path));
}

/** Drops one trailing slash (not the root's) and upper-cases percent escapes. */
function normalizePath(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.replace(/%[0-9a-f]{2}/gi, (escape) => escape.toUpperCase());
}

/**
 * Whether text matches pattern, where `*` matches any run of characters. Iterative with one backtrack point, so the
 * cost stays O(pattern × text) whatever the number of stars (a regular expression of `.*`s can backtrack
 * exponentially on a hostile URL).
 */
function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starAt = -1;
  let starText = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === '*') {
      starAt = p++;
      starText = t;
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (starAt >= 0) {
      p = starAt + 1;
      t = ++starText;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/**
 * Whether some page counts for both filters (two form triggers on one site then fire on the same submission): `all`
 * overlaps every filter; two path patterns overlap when one path matches both, compared as stored and normalised as a
 * page's path is (one trailing slash, escapes' case). An invalid filter overlaps nothing.
 */
export function pageFiltersOverlap(a: string, b: string): boolean {
  const left = parsePageFilter(a);
  const right = parsePageFilter(b);
  if (!left.ok || !right.ok) return false;
  if (left.filter === PAGE_FILTER_ALL || right.filter === PAGE_FILTER_ALL) return true;
  return globsIntersect(normalizePath(left.filter), normalizePath(right.filter));
}

/**
 * Whether some text matches both patterns, where `*` matches any run of characters: a walk over pairs of positions
 * (a star may match nothing, or take the other side's next character, a star included), remembered, so the cost stays
 * O(a × b) whatever the stars.
 */
function globsIntersect(a: string, b: string): boolean {
  const seen = new Set<number>();
  const width = b.length + 1;
  const walk = (i: number, j: number): boolean => {
    if (i === a.length && j === b.length) return true;
    const key = i * width + j;
    if (seen.has(key)) return false;
    seen.add(key);
    const x = a[i];
    const y = b[j];
    if (x === '*' && (walk(i + 1, j) || (j < b.length && walk(i, j + 1)))) return true;
    if (y === '*' && (walk(i, j + 1) || (i < a.length && walk(i + 1, j)))) return true;
    return x !== undefined && y !== undefined && x !== '*' && y !== '*' && x === y && walk(i + 1, j + 1);
  };
  return walk(0, 0);
}
