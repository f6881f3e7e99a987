// @vitest-environment happy-dom
/** How the core imports its optional scripts (src/loader/optional.ts), and when it fetches them. */
import { afterEach, describe, expect, test } from 'vitest';
import type { Service } from '../../src/loader/api';
import { boot } from '../../src/loader/boot';
import { optionalScripts } from '../../src/loader/optional';
import { addSignupForm, configFor, preparePage, resetPage, service, SERVICE, SITE_KEY } from './harness';
import { optionalModules } from './optional-modules';

afterEach(resetPage);

describe('importing an optional script', () => {
  test('imports /loader-<name>.js from the service base URL and resolves its default export', async () => {
    preparePage('https://www.example.com/', configFor('https://example.com'), null);
    const load = optionalScripts('https://cnv.test/loader.js?site_key=k');
    const forms = await load('forms');
    expect(optionalModules.imported).toEqual(['https://cnv.test/loader-forms.js']);
    expect(forms).toEqual(expect.any(Function));
  });

  test('a script that fails to load resolves undefined: its feature stays off and nothing throws', async () => {
    preparePage('https://www.example.com/', configFor('https://example.com'), null, 'fail');
    await expect(optionalScripts('https://cnv.test')('links')).resolves.toBeUndefined();
  });

  test.each([
    ['links', '../../src/loader/links-script'],
    ['forms', '../../src/loader-forms/script'],
  ])('the %s script is a module whose default export is guarded, and which defines nothing on window', async (_name, entry) => {
    const before = Object.keys(window);
    const module = (await import(entry)) as { default: (...args: unknown[]) => unknown };
    expect(Object.keys(window)).toEqual(before);
    // Called with nothing it expects, the function fails inside; the error never reaches the caller.
    expect(() => module.default()).not.toThrow();
    expect(module.default()).toBeUndefined();
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
