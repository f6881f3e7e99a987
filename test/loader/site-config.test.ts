// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { cacheConfig, CONFIG_CACHE_MS, loadConfig } from '../../src/loader/site-config';

afterEach(() => {
  sessionStorage.clear();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const URL_ = 'https://cnv.test/collect/v1/sites/k%201/config';
const config = { site_key: 'k 1', domain: 'https://example.com', correlation_ttl_seconds: 1800, honor_gpc: true };

describe('site config', () => {
  test('is fetched with one GET', async () => {
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

  test('a cached config is used for a few minutes instead of a request', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const fetch = vi.fn(async () => ({ ok: true, json: async () => ({ ...config, domain: 'https://other.example' }) }));
    vi.stubGlobal('fetch', fetch);
    cacheConfig(URL_, config);
    expect(await loadConfig(URL_)).toMatchObject(config);
    expect(fetch).not.toHaveBeenCalled();
    vi.setSystemTime(1_000_000 + CONFIG_CACHE_MS + 1);
    expect(await loadConfig(URL_)).toMatchObject({ domain: 'https://other.example' });
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  test('the cache is keyed by service and site key', async () => {
    const fetch = vi.fn(async () => ({ ok: true, json: async () => config }));
    vi.stubGlobal('fetch', fetch);
    cacheConfig(URL_, config);
    await loadConfig('https://cnv.test/collect/v1/sites/other/config');
    await loadConfig('https://elsewhere.test/collect/v1/sites/k%201/config');
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  test('an unreadable cache entry is a miss', async () => {
    const fetch = vi.fn(async () => ({ ok: true, json: async () => config }));
    vi.stubGlobal('fetch', fetch);
    sessionStorage.setItem(URL_, '{not json');
    expect(await loadConfig(URL_)).toEqual(config);
  });
});
