// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { domainCandidates, probeCookieDomain } from '../../src/loader/cookie-domain';
import { loaderCookies } from '../../src/loader/loader-cookies';
import { installCookieJar, type CookieJar } from './cookie-jar';
import { resetPage, setUrl } from './harness';

let jar: CookieJar | undefined;
afterEach(() => {
  jar?.restore();
  resetPage();
});

const setAt = (url: string) => {
  setUrl(url);
  jar = installCookieJar(['com', 'co.uk', 'uk', 'github.io', 'io']);
  return loaderCookies(location);
};

describe('cookie domain', () => {
  test('candidates run from the shortest parent domain to the host itself', () => {
    expect(domainCandidates('a.b.example.com')).toEqual(['example.com', 'b.example.com', 'a.b.example.com']);
    expect(domainCandidates('example.com')).toEqual(['example.com']);
  });

  test('localhost and IP addresses have no candidates: their cookies stay host-only', () => {
    expect(domainCandidates('localhost')).toEqual([]);
    expect(domainCandidates('127.0.0.1')).toEqual([]);
    expect(domainCandidates('[::1]')).toEqual([]);
  });

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

  test('a host right under a public suffix writes for itself (user.github.io)', () => {
    setAt('https://user.github.io/')('c', 'v', 60);
    expect(jar!.get('c')!.domain).toBe('user.github.io');
  });

  test('the probe cookie is removed after probing, and probing happens once', () => {
    const setCookie = setAt('https://www.example.com/');
    setCookie('a', '1', 60);
    setCookie('b', '2', 60);
    expect(jar!.all().map((c) => c.name)).toEqual(['a', 'b']);
    expect(jar!.writes.filter((w) => w.startsWith('cnv_probe=')).length).toBe(2);
  });

  test('on localhost the cookie is host-only', () => {
    setAt('http://localhost:3000/')('c', 'v', 60);
    expect(jar!.get('c')).toMatchObject({ domain: undefined, value: 'v' });
    expect(jar!.get('c')!.attributes.secure).toBeUndefined();
  });

  test('when no domain is accepted the cookie stays host-only', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar(['com', 'example.com', 'www.example.com']);
    expect(probeCookieDomain(domainCandidates('www.example.com'), (n, v, s, d) => (document.cookie = `${n}=${v};max-age=${s};domain=${d}`))).toBeUndefined();
  });

  test('0 seconds deletes the cookie whatever domain it was written with', () => {
    const setCookie = setAt('https://www.example.com/');
    document.cookie = 'c=host-only';
    setCookie('c', 'parent', 60);
    expect(jar!.all().filter((c) => c.name === 'c')).toHaveLength(2);
    setCookie('c', '', 0);
    expect(jar!.all()).toEqual([]);
  });
});
