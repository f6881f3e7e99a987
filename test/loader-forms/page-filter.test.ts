import { describe, expect, test } from 'vitest';
import { PAGE_FILTER_MAX_LENGTH, pageFilterMatches, pageFiltersOverlap, parsePageFilter } from '../../src/protocol/page-filter';

describe('parsePageFilter', () => {
  test('accepts "all" in any letter case and stores it lower-case', () => {
    expect(parsePageFilter('all')).toEqual({ ok: true, filter: 'all' });
    expect(parsePageFilter(' ALL ')).toEqual({ ok: true, filter: 'all' });
  });

  test('accepts a path, or a path pattern with *, trimmed', () => {
    expect(parsePageFilter('/signup')).toEqual({ ok: true, filter: '/signup' });
    expect(parsePageFilter('  /pricing/*  ')).toEqual({ ok: true, filter: '/pricing/*' });
    expect(parsePageFilter("/a-b_c.d~e/!$&'()+,;=:@/%C3%A9*")).toEqual({ ok: true, filter: "/a-b_c.d~e/!$&'()+,;=:@/%C3%A9*" });
  });

  test('rejects what is not "all" or a path starting with /, saying what to write', () => {
    for (const value of ['', 'signup', 'https://www.example.com/signup', '*']) {
      const parsed = parsePageFilter(value);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error).toMatch(/"all"|"\/signup"/);
    }
    expect(parsePageFilter(42).ok).toBe(false);
    expect(parsePageFilter(null).ok).toBe(false);
  });

  test('rejects a query or a fragment, since both are ignored when matching', () => {
    const parsed = parsePageFilter('/signup?plan=pro');
    expect(parsed).toEqual({ ok: false, error: expect.stringContaining('query') });
    expect(parsePageFilter('/signup#top').ok).toBe(false);
  });

  test('rejects spaces and characters a URL path carries only percent-encoded', () => {
    expect(parsePageFilter('/sign up')).toEqual({ ok: false, error: expect.stringContaining('a space') });
    for (const value of ['/café', '/a<b', '/a"b', '/a\\b', '/a|b', '/a^b']) expect(parsePageFilter(value).ok).toBe(false);
  });

  test('rejects a % not followed by two hexadecimal digits', () => {
    expect(parsePageFilter('/100%').ok).toBe(false);
    expect(parsePageFilter('/a%zz').ok).toBe(false);
    expect(parsePageFilter('/a%2f').ok).toBe(true);
  });

  test(`rejects a pattern longer than ${PAGE_FILTER_MAX_LENGTH} characters`, () => {
    expect(parsePageFilter('/' + 'a'.repeat(PAGE_FILTER_MAX_LENGTH - 1)).ok).toBe(true);
    expect(parsePageFilter('/' + 'a'.repeat(PAGE_FILTER_MAX_LENGTH))).toEqual({ ok: false, error: expect.stringContaining(`${PAGE_FILTER_MAX_LENGTH}`) });
  });
});

describe('pageFilterMatches', () => {
  const at = (path: string) => `https://www.example.com${path}`;

  test('"all" matches every page', () => {
    expect(pageFilterMatches('all', at('/'))).toBe(true);
    expect(pageFilterMatches('all', at('/anything/at/all?x=1'))).toBe(true);
  });

  test('a path without * matches that path exactly', () => {
    expect(pageFilterMatches('/signup', at('/signup'))).toBe(true);
    expect(pageFilterMatches('/signup', at('/signup-now'))).toBe(false);
    expect(pageFilterMatches('/signup', at('/en/signup'))).toBe(false);
    expect(pageFilterMatches('/', at('/'))).toBe(true);
    expect(pageFilterMatches('/', at('/signup'))).toBe(false);
  });

  test('the query and the fragment of the page are ignored', () => {
    expect(pageFilterMatches('/signup', at('/signup?utm_source=x#form'))).toBe(true);
  });

  test('one trailing slash is ignored on either side', () => {
    expect(pageFilterMatches('/signup', at('/signup/'))).toBe(true);
    expect(pageFilterMatches('/signup/', at('/signup'))).toBe(true);
    expect(pageFilterMatches('/signup', at('/signup//'))).toBe(false);
  });

  test('matching is case-sensitive, as URL paths are', () => {
    expect(pageFilterMatches('/signup', at('/Signup'))).toBe(false);
  });

  test('* matches any characters, slashes included, or none', () => {
    expect(pageFilterMatches('/pricing/*', at('/pricing/team'))).toBe(true);
    expect(pageFilterMatches('/pricing/*', at('/pricing/team/annual'))).toBe(true);
    expect(pageFilterMatches('/pricing/*', at('/pricing'))).toBe(false);
    expect(pageFilterMatches('/pricing*', at('/pricing'))).toBe(true);
    expect(pageFilterMatches('/pricing*', at('/pricing-old'))).toBe(true);
    expect(pageFilterMatches('/*/signup', at('/en/signup'))).toBe(true);
    expect(pageFilterMatches('/*/signup', at('/signup'))).toBe(false);
    expect(pageFilterMatches('/a*b*c', at('/a-x-b-y-c'))).toBe(true);
    expect(pageFilterMatches('/a*b*c', at('/a-x-c-y-b'))).toBe(false);
  });

  test('percent escapes compare regardless of the case of their hex digits', () => {
    expect(pageFilterMatches('/caf%c3%a9', at('/café'))).toBe(true);
    expect(pageFilterMatches('/caf%C3%A9', at('/caf%c3%a9'))).toBe(true);
  });

  test('an invalid filter or page URL matches nothing', () => {
    expect(pageFilterMatches('signup', at('/signup'))).toBe(false);
    expect(pageFilterMatches('/signup', 'not a url')).toBe(false);
  });

  test('many stars against a long hostile path still answer (no catastrophic backtracking)', () => {
    const filter = '/' + 'a*'.repeat(100) + 'b';
    expect(pageFilterMatches(filter, at('/' + 'a'.repeat(5000)))).toBe(false);
  });
});

describe('pageFiltersOverlap', () => {
  test.each([
    ['all', '/signup', true],
    ['/signup', 'ALL', true],
    ['/signup', '/signup/', true],
    ['/signup', '/Signup', false],
    ['/signup', '/login', false],
    ['/pricing/*', '/pricing/team', true],
    ['/pricing/*', '/pricing', false],
    ['/pricing*', '/pricing', true],
    ['/pricing/*', '/pricing*', true],
    ['/a/*/c', '/a/b/*', true],
    ['/a/*/c', '/a/b/d', false],
    ['/*.html', '/blog/*', true],
    ['/*-old', '/*-new', false],
    ['/caf%c3%a9', '/caf%C3%A9', true],
    ['/*x*', '/*y*', true],
    ['/signup', 'signup', false],
  ])('%s and %s: %s', (a, b, overlap) => {
    expect(pageFiltersOverlap(a, b)).toBe(overlap);
    expect(pageFiltersOverlap(b, a)).toBe(overlap);
  });

  test('agrees with the matcher: a page both filters match means an overlap', () => {
    const filters = ['all', '/', '/a', '/a/*', '/a*', '/*b', '/a/*/b', '/*', '/b/*', '/a/b*c'];
    const pages = ['/', '/a', '/a/', '/a/b', '/a/xb', '/ab', '/a/x/b', '/b/a', '/a/bc', '/a/bxc', '/c'];
    for (const a of filters) {
      for (const b of filters) {
        const shared = pages.some((page) => pageFilterMatches(a, `https://example.com${page}`) && pageFilterMatches(b, `https://example.com${page}`));
        if (shared) expect(pageFiltersOverlap(a, b), `${a} and ${b}`).toBe(true);
      }
    }
  });

  test('stays quick for long patterns full of stars', () => {
    const a = `/${'*a'.repeat(120)}*`;
    const b = `/${'*b'.repeat(120)}*`;
    expect(pageFiltersOverlap(a, b)).toBe(true);
    expect(pageFiltersOverlap(a.slice(0, -1), b.slice(0, -1))).toBe(false); // one ends in a, the other in b
    expect(pageFiltersOverlap(`${'/a'.repeat(120)}x`, `/${'*a'.repeat(100)}y`)).toBe(false);
  });
});
