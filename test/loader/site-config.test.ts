// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { loadConfig } from '../../src/loader/site-config';

afterEach(() => {
  sessionStorage.clear();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const URL_ = 'https://cnv.test/collect/v1/sites/k%201/config';
const config = { site_key: 'k 1', domain: 'https://example.com', cookie_domain: 'example.com', correlation_ttl_seconds: 1800, honor_gpc: true };

describe('site config', () => {
  test('is fetched with one GET, left to the HTTP cache (no cache mode or header of its own)', async () => {
    const fetch = vi.fn(async () => ({ ok: true, json: async () => config }));
    vi.stubGlobal('fetch', fetch);
    expect(await loadConfig(URL_)).toEqual(config);
    expect(fetch).toHaveBeenCalledWith(URL_);
  });

  test('a 404, a network error or a body that is not JSON give null', async () => {
    vi.stubGlobal('fetch', async () => ({ ok: false, status: 404, json: async () => ({}) }));
    expect(await loadConfig(URL_)).toBeNull();
    vi.stubGlobal('fetch', async () => {
      throw new TypeError('Failed to fetch');
    });
    expect(await loadConfig(URL_)).toBeNull();
    vi.stubGlobal('fetch', async () => ({ ok: true, json: async () => JSON.parse('<html>') }));
    expect(await loadConfig(URL_)).toBeNull();
  });

  test('sessionStorage is never touched: its first access costs synchronous IPCs on every page view', async () => {
    const storage = vi.spyOn(window, 'sessionStorage', 'get');
    vi.stubGlobal('fetch', vi.fn(async () => ({ ok: true, json: async () => config })));
    await loadConfig(URL_);
    await loadConfig(URL_);
    expect(storage).not.toHaveBeenCalled();
  });
});
