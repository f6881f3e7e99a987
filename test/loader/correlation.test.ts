// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { correlate } from '../../src/loader/correlation';
import { randomId as newToken } from '../../src/loader/random-id';
import { CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../../src/protocol/cookies';
import { resetPage, setUrl } from './harness';
import { installCookieJar } from './cookie-jar';

afterEach(resetPage);

describe('correlation token', () => {
  test('is 22 base64url characters', () => {
    for (let i = 0; i < 200; i++) expect(newToken()).toMatch(CORRELATION_TOKEN_PATTERN);
  });

  test('encodes 16 bytes from crypto.getRandomValues, with - and _ for + and /', () => {
    vi.spyOn(crypto, 'getRandomValues').mockImplementation(((array: Uint8Array) => {
      array.set([0xfb, 0xff, 0xbf, ...new Array(13).fill(0)]);
      return array;
    }) as typeof crypto.getRandomValues);
    expect(newToken()).toBe('-_-_AAAAAAAAAAAAAAAAAA');
  });

  test('tokens differ', () => {
    expect(new Set(Array.from({ length: 100 }, newToken)).size).toBe(100);
  });

  test('a new token is written to the cookie for the given TTL', () => {
    setUrl('https://www.example.com/');
    const jar = installCookieJar();
    const write = vi.fn();
    const token = correlate(900, write);
    expect(write).toHaveBeenCalledWith(CORRELATION_COOKIE, token, 900);
    jar.restore();
  });

  test('a still-valid token in the cookie is reused and written again (expiry refreshed)', () => {
    setUrl('https://www.example.com/');
    const jar = installCookieJar();
    document.cookie = `${CORRELATION_COOKIE}=AAAAAAAAAAAAAAAAAAAAAA`;
    const write = vi.fn();
    expect(correlate(1800, write)).toBe('AAAAAAAAAAAAAAAAAAAAAA');
    expect(write).toHaveBeenCalledWith(CORRELATION_COOKIE, 'AAAAAAAAAAAAAAAAAAAAAA', 1800);
    jar.restore();
  });

  test('a cookie that is not a token is replaced by a new one', () => {
    setUrl('https://www.example.com/');
    const jar = installCookieJar();
    document.cookie = `${CORRELATION_COOKIE}=tampered`;
    expect(correlate(1800, vi.fn())).not.toBe('tampered');
    jar.restore();
  });
});
