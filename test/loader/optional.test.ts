// @vitest-environment happy-dom
/** The hook between the core and its optional scripts (src/loader/optional.ts), and when the core fetches them. */
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { Service } from '../../src/loader/api';
import { boot } from '../../src/loader/boot';
import { handOver, optionalScripts } from '../../src/loader/optional';
import { addSignupForm, configFor, preparePage, resetPage, service, SERVICE, SITE_KEY } from './harness';

afterEach(resetPage);

describe('the hook', () => {
  test('appends a script element fetching /loader-<name>.js from the service, and resolves what the script handed over', async () => {
    const svc: Service = {};
    const appended: HTMLScriptElement[] = [];
    vi.spyOn(document.head, 'append').mockImplementation((node) => void appended.push(node as HTMLScriptElement));
    const load = optionalScripts(svc, 'https://cnv.test/loader.js?site_key=k');
    const loaded = load('forms');
    expect(appended.map((s) => s.src)).toEqual(['https://cnv.test/loader-forms.js']);
    const run = () => {};
    svc._x!('forms', run);
    appended[0]!.onload!.call(appended[0]!, new Event('load'));
    expect(await loaded).toBe(run);
  });

  test('a script that fails to load, or loads without handing anything over, resolves undefined', async () => {
    const svc: Service = {};
    const appended: HTMLScriptElement[] = [];
    vi.spyOn(document.head, 'append').mockImplementation((node) => void appended.push(node as HTMLScriptElement));
    const load = optionalScripts(svc, 'https://cnv.test');
    const failed = load('links');
    appended[0]!.onerror!.call(appended[0]!, new Event('error'));
    expect(await failed).toBeUndefined();
    const silent = load('forms');
    appended[1]!.onload!.call(appended[1]!, new Event('load'));
    expect(await silent).toBeUndefined();
  });

  test('handOver passes the exports guarded: an error inside an optional script never reaches the core', () => {
    let handed: unknown;
    (window as unknown as { __service: Service }).__service = { _x: (_name, exports) => (handed = exports) };
    handOver('forms', () => {
      throw new Error('a bug in the forms script');
    });
    expect(() => (handed as () => void)()).not.toThrow();
  });

  test('handOver without the core on the page (the script loaded on its own) does nothing and throws nothing', () => {
    expect(() => handOver('links', () => null)).not.toThrow();
    (window as unknown as { __service: unknown }).__service = { q: [] };
    expect(() => handOver('links', () => null)).not.toThrow();
  });

  test.each([
    ['links', '../../src/loader/links-script'],
    ['forms', '../../src/loader-forms/script'],
  ])('the %s script, as it runs, hands one function to __service._x and defines nothing else', async (name, entry) => {
    const _x = vi.fn();
    (window as unknown as { __service: Service }).__service = { _x };
    const before = Object.keys(window);
    await import(entry);
    expect(_x).toHaveBeenCalledOnce();
    expect(_x).toHaveBeenCalledWith(name, expect.any(Function));
    expect(Object.keys(window)).toEqual(before);
  });
});

describe('the links script', () => {
  test('is not fetched by a tag without data-linker or data-url-passthrough', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://example.com'));
    boot();
    await service()!.ready;
    expect(page.scripts).toEqual([]);
  });

  test.each<Record<string, string>>([{ 'data-linker': 'example-app.io' }, { 'data-url-passthrough': '' }])('is fetched, beside the config, by a tag with %o', async (attribute) => {
    const page = preparePage('https://www.example.com/', configFor('https://example.com'), { 'data-site-key': SITE_KEY, ...attribute });
    boot();
    expect(page.scripts, 'fetched at once, not after the config').toEqual([`${SERVICE}/loader-links.js`]);
    await service()!.ready;
  });

  test('when it fails to load, the page still records its click and signs up', async () => {
    const page = preparePage('https://www.example.com/?gclid=L1', configFor('https://example.com'), { 'data-site-key': SITE_KEY, 'data-linker': 'example-app.io' }, 'fail');
    boot();
    expect(await service()!.ready).toBe(true);
    addSignupForm().form.requestSubmit();
    await page.flush();
    expect(page.beacons.map((b) => b.snapshot.touch?.click_ids)).toEqual([{ gclid: 'L1' }]);
  });

  test('when it never arrives, ready still resolves and the queued calls still run', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://example.com'), { 'data-site-key': SITE_KEY, 'data-url-passthrough': '' }, 'hang');
    (window as unknown as { __service: Service }).__service = { q: [['captureSaasSignupIntent', []]] };
    boot();
    expect(await service()!.ready).toBe(true);
    await page.flush();
    expect(page.beacons.map((b) => b.snapshot.trigger)).toEqual(['api']);
  });
});
