// @vitest-environment happy-dom
/**
 * The Domain of the loader's cookies is the config's cookie_domain: the registrable domain of the site's domain, which
 * the service computes from the Public Suffix List (cookieDomainOf), so the loader never probes for it.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { loaderCookies } from '../../src/loader/loader-cookies';
import { cookieDomainOf } from '../../src/server/collector/cookie-domain';
import { installCookieJar, type CookieJar } from './cookie-jar';
import { resetPage, setUrl } from './harness';

let jar: CookieJar | undefined;
afterEach(() => {
  jar?.restore();
  resetPage();
});

/** The cookie writer of a page at url, for a site whose domain is siteDomain (cookie_domain as the service sends it). */
const setAt = (url: string, siteDomain: string | null = new URL(url).origin) => {
  setUrl(url);
  jar = installCookieJar(['com', 'co.uk', 'uk', 'github.io', 'io']);
  return loaderCookies(location, cookieDomainOf(siteDomain));
};

describe('cookie domain', () => {
  test('www.example.com writes for example.com, so app.example.com reads it', () => {
    setAt('https://www.example.com/')('c', 'v', 60);
    expect(jar!.get('c')!.domain).toBe('example.com');
    setUrl('https://app.example.com/');
    expect(jar!.get('c')!.value).toBe('v');
  });

  test('a public suffix is skipped: shop.example.co.uk writes for example.co.uk', () => {
    setAt('https://shop.example.co.uk/')('c', 'v', 60);
    expect(jar!.get('c')!.domain).toBe('example.co.uk');
  });

  test('a host right under a private suffix writes for itself (user.github.io)', () => {
    setAt('https://user.github.io/')('c', 'v', 60);
    expect(jar!.get('c')!.domain).toBe('user.github.io');
  });

  test('no probe cookie is ever written: the one write is the cookie itself', () => {
    const setCookie = setAt('https://www.example.com/');
    setCookie('a', '1', 60);
    setCookie('b', '2', 60);
    expect(jar!.all().map((c) => c.name)).toEqual(['a', 'b']);
    expect(jar!.writes).toHaveLength(2);
  });

  test('on localhost and IP addresses (cookie_domain null) the cookie is host-only', () => {
    setAt('http://localhost:3000/')('c', 'v', 60);
    expect(jar!.get('c')).toMatchObject({ domain: undefined, value: 'v' });
    expect(jar!.get('c')!.attributes.secure).toBeUndefined();
    setAt('http://127.0.0.1:3000/')('c', 'v', 60);
    expect(jar!.get('c')).toMatchObject({ domain: undefined, value: 'v' });
  });

  test('on https: Path=/, SameSite=None, Secure and Max-Age; on http SameSite=Lax without Secure', () => {
    setAt('https://www.example.com/')('c', 'v', 60);
    expect(jar!.get('c')!.attributes).toMatchObject({ path: '/', samesite: 'None', secure: true, 'max-age': '60' });
    setAt('http://www.example.com/')('c', 'v', 60);
    expect(jar!.get('c')!.attributes).toMatchObject({ path: '/', samesite: 'Lax', 'max-age': '60' });
    expect(jar!.get('c')!.attributes.secure).toBeUndefined();
  });

  test('0 seconds deletes the cookie whatever domain it was written with (the cookie domain or host-only)', () => {
    const setCookie = setAt('https://www.example.com/');
    document.cookie = 'c=host-only';
    setCookie('c', 'parent', 60);
    expect(jar!.all().filter((c) => c.name === 'c')).toHaveLength(2);
    setCookie('c', '', 0);
    expect(jar!.all()).toEqual([]);
  });

  test('a jar that throws (private modes) is ignored', () => {
    setUrl('https://www.example.com/');
    Object.defineProperty(document, 'cookie', { configurable: true, get: () => '', set: () => { throw new Error('blocked'); } });
    expect(() => loaderCookies(location, 'example.com')('c', 'v', 60)).not.toThrow();
    delete (document as unknown as Record<string, unknown>).cookie;
  });
});
