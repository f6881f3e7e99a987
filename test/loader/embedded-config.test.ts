// @vitest-environment happy-dom
/**
 * The loader served with its site's config inside (`/loader.js?site_key=KEY`): it decides at its first act, in the
 * task that runs the script, so the ad touch is written before a visitor who leaves at once is gone.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { boot, bootWithConfig } from '../../src/loader/boot';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { addScript, addSignupForm, configFor, preparePage, resetPage, runAsCurrentScript, service, SERVICE, SITE_KEY } from './harness';

afterEach(resetPage);

const SITE_SRC = `${SERVICE}/loader.js?site_key=${SITE_KEY}`;
const snapshotsUrl = `${SERVICE}/collect/v1/sites/${SITE_KEY}/snapshots`;

/** A page at url whose running script is the per-site loader tag (attributes as given); nothing answers a config request. */
function sitePage(url: string, attributes: Record<string, string> = {}) {
  const page = preparePage(url, 404, null);
  runAsCurrentScript(addScript(SITE_SRC, attributes));
  return page;
}
const touchOf = (page: ReturnType<typeof sitePage>) => JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value));

describe('the per-site loader (config inside)', () => {
  test('writes the ad touch before it returns, without a config request', async () => {
    const page = sitePage('https://www.example.com/pricing?gclid=fast&utm_source=google');
    bootWithConfig(configFor('https://example.com'));
    // Nothing awaited: the visitor may leave right after the script ran.
    expect(touchOf(page).click_ids).toEqual({ gclid: 'fast' });
    expect(touchOf(page).utm).toEqual({ utm_source: 'google' });
    expect(page.fetch).not.toHaveBeenCalled();
    expect(await service()!.ready).toBe(true);
    expect(page.fetch).not.toHaveBeenCalled();
  });

  test('a signup right after the landing writes the token inside the submit and sends the click with it', async () => {
    const page = sitePage('https://www.example.com/?gclid=g1');
    bootWithConfig(configFor('https://www.example.com'));
    const { form } = addSignupForm();
    let during: string | undefined;
    form.addEventListener('submit', () => (during = page.jar.get(CORRELATION_COOKIE)?.value));
    form.requestSubmit();
    expect(during).toBeTruthy();
    await page.flush();
    expect(page.beacons).toHaveLength(1);
    expect(page.beacons[0]!.url).toBe(snapshotsUrl);
    expect(page.beacons[0]!.snapshot).toMatchObject({ correlation_token: during, touch: { click_ids: { gclid: 'g1' } } });
  });

  test('captureSaasSignupIntent() right after the script writes the cookie before it returns', async () => {
    const page = sitePage('https://app.example.com/welcome?gclid=g2');
    bootWithConfig(configFor('https://example.com'));
    const pending = service()!.captureSaasSignupIntent!();
    const written = page.jar.get(CORRELATION_COOKIE)!.value;
    expect(await pending).toBe(written);
  });

  test('takes the site key from the config and the service from its own src (no key discovery)', async () => {
    const page = sitePage('https://www.example.com/?gclid=g3');
    bootWithConfig(configFor('https://example.com', { site_key: 'served_key' }));
    service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(page.beacons[0]!.url).toBe(`${SERVICE}/collect/v1/sites/served_key/snapshots`);
  });

  test('on a page outside the domain does nothing: no cookie, nothing sent, ready false', async () => {
    const page = sitePage('https://www.other.example/?gclid=g4');
    bootWithConfig(configFor('https://example.com'));
    expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
    expect(await service()!.ready).toBe(false);
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    await page.flush();
    expect(page.beacons).toHaveLength(0);
    expect(page.fetch).not.toHaveBeenCalled();
  });

  test('with data-consent-required keeps the click in memory until consent(true), queued before the loader', async () => {
    const page = sitePage('https://www.example.com/?gclid=g5', { 'data-consent-required': '' });
    (window as unknown as { __service: unknown }).__service = { q: [['consent', [true]]] };
    bootWithConfig(configFor('https://example.com'));
    expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
    await service()!.ready;
    expect(touchOf(page).click_ids).toEqual({ gclid: 'g5' });
  });

  test('without a script element to read its tag from (document.currentScript) warns once and does nothing', async () => {
    const page = preparePage('https://www.example.com/?gclid=g6', 404, null);
    bootWithConfig(configFor('https://example.com'));
    expect(page.warn).toHaveBeenCalledTimes(1);
    expect(service()).toBeUndefined();
    expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
  });

  test('without document.currentScript (a page that overrides its getter) finds its own tag by the key in its src', async () => {
    const page = preparePage('https://www.example.com/?gclid=g10', 404, null);
    // Another site's tag comes first, with options this loader must not take.
    addScript(`${SERVICE}/loader.js?site_key=other_site`, { 'data-consent-required': '', 'data-api': 'https://elsewhere.test' });
    addScript(`${SERVICE}/loader.js`, { 'data-site-key': 'other_site' });
    addScript(SITE_SRC);
    bootWithConfig(configFor('https://example.com'));
    expect(touchOf(page).click_ids).toEqual({ gclid: 'g10' });
    expect(await service()!.ready).toBe(true);
    service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(page.beacons.map((b) => b.url)).toEqual([snapshotsUrl]);
    expect(page.warn).not.toHaveBeenCalled();
  });

  test("without document.currentScript and without its own tag, never takes another site's tag: warns and does nothing", async () => {
    const page = preparePage('https://www.example.com/?gclid=g11', 404, null);
    addScript(`${SERVICE}/loader.js?site_key=other_site`);
    addScript(`${SERVICE}/loader.js?site_key=${SITE_KEY}x`);
    addScript(`${SERVICE}/loader.js`, { 'data-site-key': 'other_site' });
    bootWithConfig(configFor('https://example.com'));
    expect(page.warn).toHaveBeenCalledTimes(1);
    expect(service()).toBeUndefined();
    expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
  });

  test('a second copy on the page does nothing', async () => {
    const page = sitePage('https://www.example.com/?gclid=first');
    bootWithConfig(configFor('https://example.com'));
    const ready = service()!.ready;
    history.replaceState(null, '', '/?gclid=second');
    bootWithConfig(configFor('https://example.com'));
    expect(service()!.ready).toBe(ready);
    expect(touchOf(page).click_ids).toEqual({ gclid: 'first' });
  });
});

describe('the full loader with a config inside (a site with form triggers)', () => {
  test('decides at once and fetches the form detectors the config lists, not the config', async () => {
    const page = sitePage('https://www.example.com/contact?gclid=g7');
    boot(configFor('https://example.com', { forms: [{ integration: 'html', page_filter: 'all' }] }));
    expect(touchOf(page).click_ids).toEqual({ gclid: 'g7' });
    expect(await service()!.ready).toBe(true);
    await vi.waitFor(() => expect(page.scripts).toEqual([`${SERVICE}/loader-forms.js`]));
    expect(page.fetch).not.toHaveBeenCalled();
  });

  test('the per-site lean loader never fetches the form detectors', async () => {
    const page = sitePage('https://www.example.com/contact?gclid=g8');
    bootWithConfig(configFor('https://example.com'));
    await service()!.ready;
    await Promise.resolve();
    expect(page.scripts).toEqual([]);
  });

  test('without a config inside it is the plain loader: one config request, then it decides', async () => {
    const page = preparePage('https://www.example.com/?gclid=g9', configFor('https://example.com'));
    boot(null);
    expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
    expect(await service()!.ready).toBe(true);
    expect(page.fetch).toHaveBeenCalledTimes(1);
    expect(page.fetch.mock.calls[0]![0]).toBe(`${SERVICE}/collect/v1/sites/${SITE_KEY}/config`);
    expect(touchOf(page).click_ids).toEqual({ gclid: 'g9' });
  });
});
