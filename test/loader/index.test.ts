// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { CLICK_COOKIE } from '../../src/protocol/cookies';
import { addScript, configFor, preparePage, resetPage, runAsCurrentScript, service, SERVICE } from './harness';

afterEach(resetPage);

/** What the build's function head binds: the config the service put inside, or null in the plain loader. */
const buildsWith = (config: unknown) => vi.stubGlobal('siteConfig', config);

describe('the loader entry (dist/loader.js)', () => {
  test('boots on load and defines nothing on window but __service', async () => {
    preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'));
    buildsWith(null);
    const before = new Set(Object.getOwnPropertyNames(window));
    vi.resetModules();
    await import('../../src/loader/index');
    const added = Object.getOwnPropertyNames(window).filter((name) => !before.has(name));
    expect(added).toEqual(['__service']);
    expect(await service()!.ready).toBe(true);
  });

  test('an error while booting never reaches the page', async () => {
    preparePage('https://www.example.com/', configFor('https://example.com'));
    buildsWith(null);
    vi.spyOn(document, 'querySelectorAll').mockImplementation(() => {
      throw new Error('broken DOM');
    });
    Object.defineProperty(document, 'scripts', {
      configurable: true,
      get: () => {
        throw new Error('broken DOM');
      },
    });
    vi.resetModules();
    await expect(import('../../src/loader/index')).resolves.toBeDefined();
    delete (document as unknown as Record<string, unknown>).scripts;
  });
});

describe('the per-site loader entry (dist/site-loader.js, served with the config inside)', () => {
  test('boots on load with the config it was called with: the touch is written, no config request', async () => {
    const page = preparePage('https://www.example.com/?gclid=entry', 404, null);
    runAsCurrentScript(addScript(`${SERVICE}/loader.js?site_key=k`));
    buildsWith(configFor('https://example.com'));
    vi.resetModules();
    await import('../../src/loader/site-loader');
    expect(JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value)).click_ids).toEqual({ gclid: 'entry' });
    expect(page.fetch).not.toHaveBeenCalled();
    expect(await service()!.ready).toBe(true);
  });

  test('called with null (the build as written, never served so) throws nothing into the page', async () => {
    preparePage('https://www.example.com/', 404, null);
    buildsWith(null);
    vi.resetModules();
    await expect(import('../../src/loader/site-loader')).resolves.toBeDefined();
  });
});
