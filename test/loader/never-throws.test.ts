// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { boot } from '../../src/loader/boot';
import { guard } from '../../src/loader/guard';
import { loaderCookies } from '../../src/loader/loader-cookies';
import { readCookies } from '../../src/loader/read-cookie';
import { loadConfig } from '../../src/loader/site-config';
import { addSignupForm, configFor, preparePage, resetPage, service, setUrl } from './harness';

const storageDescriptors = ['sessionStorage', 'localStorage'].map(
  (name) => [name, Object.getOwnPropertyDescriptor(window, name)] as const,
);
afterEach(() => {
  delete (document as unknown as Record<string, unknown>).cookie;
  for (const [name, descriptor] of storageDescriptors) {
    if (descriptor) Object.defineProperty(window, name, descriptor);
    else delete (window as unknown as Record<string, unknown>)[name];
  }
  resetPage();
});

const blockCookies = () =>
  Object.defineProperty(document, 'cookie', {
    configurable: true,
    get: () => {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    },
    set: () => {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    },
  });
const blockStorage = () => {
  for (const name of ['sessionStorage', 'localStorage']) {
    Object.defineProperty(window, name, {
      configurable: true,
      get: () => {
        throw new DOMException('Access is denied for this document.', 'SecurityError');
      },
    });
  }
};

describe('when cookies or storage throw (private modes, blocked storage)', () => {
  test('the cookie accessors do nothing instead of throwing, and the config loads without storage', async () => {
    setUrl('https://www.example.com/');
    const config = configFor('https://example.com');
    vi.stubGlobal('fetch', async () => ({ ok: true, json: async () => config }));
    blockCookies();
    blockStorage();
    expect(readCookies()).toEqual({});
    const setCookie = loaderCookies(location);
    expect(() => setCookie('a', '1', 60)).not.toThrow();
    expect(() => setCookie('a', '', 0)).not.toThrow();
    const url = 'https://cnv.test/collect/v1/sites/k/config';
    expect(await loadConfig(url)).toEqual(config);
  });

  test('the loader still runs: intent resolves a token and a snapshot with the landing touch is sent', async () => {
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'));
    blockCookies();
    blockStorage();
    const errors = vi.fn();
    window.addEventListener('error', errors);
    expect(() => boot()).not.toThrow();
    expect(await service()!.ready).toBe(true);
    const { form } = addSignupForm();
    form.requestSubmit();
    const token = await service()!.captureSaasSignupIntent!();
    expect(token).toMatch(/^[\w-]{22}$/);
    service()!.consent!(false);
    await page.flush();
    expect(page.beacons).toHaveLength(2);
    expect(page.beacons[1]!.snapshot.touch!.click_ids).toEqual({ gclid: 'g' });
    expect(errors).not.toHaveBeenCalled();
  });

  test('a throwing fetch or sendBeacon never reaches the page', async () => {
    preparePage('https://www.example.com/', configFor('https://example.com'));
    vi.stubGlobal('fetch', () => {
      throw new TypeError('fetch is not a function');
    });
    expect(() => boot()).not.toThrow();
    expect(await service()!.ready).toBe(false);
  });

  test('a frozen window.__service stops the loader before it fetches, without an error reaching the page', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://example.com'));
    (window as unknown as { __service: unknown }).__service = Object.freeze({ q: [] });
    const rejections = vi.fn();
    window.addEventListener('unhandledrejection', rejections);
    expect(() => guard(boot)()).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(page.fetch).not.toHaveBeenCalled();
    expect(rejections).not.toHaveBeenCalled();
  });

  test('a window.__service that is not an object is replaced', async () => {
    preparePage('https://www.example.com/', configFor('https://example.com'));
    (window as unknown as { __service: unknown }).__service = 'not an object';
    expect(() => boot()).not.toThrow();
    expect(await service()!.ready).toBe(true);
  });
});
