// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { readPlatformCookies } from '../../src/loader/platform-cookies';
import { PLATFORM_COOKIES, SIGNAL_VALUE_MAX } from '../../src/protocol/signals';
import { installCookieJar, type CookieJar } from './cookie-jar';
import { resetPage, setUrl } from './harness';

let jar: CookieJar;
afterEach(() => {
  jar.restore();
  resetPage();
});

describe('platform cookies', () => {
  test('every listed cookie present is read; others are not', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    for (const name of PLATFORM_COOKIES) document.cookie = `${name}=fb.1.1700000000000.IwAR_${name}-x`;
    document.cookie = '_ga=GA1.1.1';
    document.cookie = 'x_fbp=no';
    expect(readPlatformCookies()).toEqual(Object.fromEntries(PLATFORM_COOKIES.map((name) => [name, `fb.1.1700000000000.IwAR_${name}-x`])));
  });

  test('values are read as js-cookie reads them: %XX sequences decoded; a value that does not decode is left out', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    document.cookie = '_fbp=fb.1.17%2B00';
    document.cookie = '_ttp=bad%E0%A4';
    expect(readPlatformCookies()).toEqual({ _fbp: 'fb.1.17+00' });
  });

  test('values are trimmed and capped like URL signals; empty ones are skipped', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    document.cookie = `_fbc=${'c'.repeat(SIGNAL_VALUE_MAX + 10)}`;
    document.cookie = '_ttp=';
    expect(readPlatformCookies()).toEqual({ _fbc: 'c'.repeat(SIGNAL_VALUE_MAX) });
  });

  test('none present: an empty object', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    expect(readPlatformCookies()).toEqual({});
  });
});
