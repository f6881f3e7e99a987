// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { boot } from '../../src/loader/boot';
import { SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { CLICK_COOKIE, CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../../src/protocol/cookies';
import { addScript, addSignupForm, configFor, preparePage, resetPage, service, SERVICE, SITE_KEY } from './harness';

afterEach(resetPage);

const configUrl = `${SERVICE}/collect/v1/sites/${SITE_KEY}/config`;
const snapshotsUrl = `${SERVICE}/collect/v1/sites/${SITE_KEY}/snapshots`;

describe('an active page (origin within the site domain)', () => {
  test('fetches the config once, stores the landing touch and resolves ready with true', async () => {
    const page = preparePage('https://www.example.com/pricing?gclid=abc&utm_source=google', configFor('https://example.com'));
    boot();
    expect(await service()!.ready).toBe(true);
    expect(page.fetch).toHaveBeenCalledTimes(1);
    expect(page.fetch.mock.calls[0]![0]).toBe(configUrl);
    const touch = JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value));
    expect(touch.click_ids).toEqual({ gclid: 'abc' });
    expect(touch.utm).toEqual({ utm_source: 'google' });
    expect(touch.landing_page_url).toBe('https://www.example.com/pricing'); // its click ids and UTM kept apart, the rest of the query not at all
  });

  test.each(['{}', '1', 'null', '[]', '"text"', '{"click_ids":null}'])(
    'a cnv_click cookie that is JSON but no touch (%s) neither stops a new click nor goes out as a touch',
    async (junk) => {
      const page = preparePage('https://www.example.com/?gclid=fresh', configFor('https://example.com'));
      document.cookie = `${CLICK_COOKIE}=${encodeURIComponent(junk)}; domain=example.com; path=/`;
      boot();
      await service()!.ready;
      expect(JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value)).click_ids).toEqual({ gclid: 'fresh' });
      // Without a new click, the snapshot carries no touch rather than the damaged one.
      resetPage();
      const plain = preparePage('https://www.example.com/signup', configFor('https://example.com'));
      document.cookie = `${CLICK_COOKIE}=${encodeURIComponent(junk)}; domain=example.com; path=/`;
      boot();
      await service()!.ready;
      await service()!.captureSaasSignupIntent!();
      await plain.flush();
      expect(plain.beacons).toHaveLength(1);
      expect(plain.beacons[0]!.snapshot.touch).toBeNull();
    },
  );

  test('a submit of a marked form writes the correlation cookie inside the event and sends one snapshot', async () => {
    const page = preparePage('https://www.example.com/?gclid=abc', configFor('https://www.example.com'));
    boot();
    await service()!.ready;
    const { form } = addSignupForm();
    let cookieDuringSubmit: string | undefined;
    form.addEventListener('submit', () => (cookieDuringSubmit = page.jar.get(CORRELATION_COOKIE)?.value));
    form.requestSubmit();
    expect(cookieDuringSubmit).toMatch(CORRELATION_TOKEN_PATTERN);
    await page.flush();
    expect(page.beacons).toHaveLength(1);
    const beacon = page.beacons[0]!;
    expect(beacon.url).toBe(snapshotsUrl);
    expect(beacon.type).toBe(SNAPSHOT_CONTENT_TYPE);
    expect(beacon.snapshot).toMatchObject({
      correlation_token: cookieDuringSubmit,
      trigger: 'form_submit',
      page_url: 'https://www.example.com/?gclid=abc',
      referrer: null,
      touch: { click_ids: { gclid: 'abc' }, utm: {} },
      cookies: {},
    });
  });

  test('captureSaasSignupIntent() writes the cookie before it returns and resolves the token', async () => {
    const page = preparePage('https://app.example.com/welcome', configFor('https://example.com'));
    boot();
    await service()!.ready;
    const pending = service()!.captureSaasSignupIntent!();
    const written = page.jar.get(CORRELATION_COOKIE)!.value;
    expect(await pending).toBe(written);
    await page.flush();
    expect(page.beacons.map((b) => b.snapshot.trigger)).toEqual(['api']);
    expect(page.beacons[0]!.snapshot.touch).toBeNull();
  });

  test('captureSaasSignupIntent() called before the config arrives waits for it', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com'));
    boot();
    const token = await service()!.captureSaasSignupIntent!();
    expect(token).toMatch(CORRELATION_TOKEN_PATTERN);
    expect(page.jar.get(CORRELATION_COOKIE)!.value).toBe(token);
  });

  test('on https the correlation cookie carries Path=/, SameSite=None; Secure (SSO callbacks that arrive as a cross-site POST), Max-Age from the config and the widest domain', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com', { correlation_ttl_seconds: 600 }));
    boot();
    await service()!.ready;
    await service()!.captureSaasSignupIntent!();
    const cookie = page.jar.get(CORRELATION_COOKIE)!;
    expect(cookie.domain).toBe('example.com');
    expect(cookie.attributes).toMatchObject({ path: '/', samesite: 'None', 'max-age': '600', secure: true });
    expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
  });

  test('on http the cookies are SameSite=Lax without Secure (browsers refuse SameSite=None without Secure)', async () => {
    const page = preparePage('http://www.example.com/?gclid=g', configFor('http://www.example.com'));
    boot();
    await service()!.captureSaasSignupIntent!();
    for (const name of [CORRELATION_COOKIE, CLICK_COOKIE]) {
      const cookie = page.jar.get(name)!;
      expect(cookie.attributes).toMatchObject({ path: '/', samesite: 'Lax' });
      expect(cookie.attributes.secure).toBeUndefined();
    }
  });

  test('a repeated intent reuses the still-valid token and refreshes its expiry', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com'));
    boot();
    const first = await service()!.captureSaasSignupIntent!();
    const writesBefore = page.jar.writes.filter((w) => w.startsWith(`${CORRELATION_COOKIE}=`)).length;
    const second = await service()!.captureSaasSignupIntent!();
    expect(second).toBe(first);
    expect(page.jar.writes.filter((w) => w.startsWith(`${CORRELATION_COOKIE}=`)).length).toBe(writesBefore + 1);
    await page.flush();
    expect(page.beacons.map((b) => b.snapshot.correlation_token)).toEqual([first, first]);
  });

  test('the platform cookies present are sent with the snapshot, as written', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com'));
    document.cookie = '_fbp=fb.1.1700000000000.123';
    document.cookie = '_gcl_au=1.1.99.1700000000';
    document.cookie = 'other=ignored';
    boot();
    await service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(page.beacons[0]!.snapshot.cookies).toEqual({ _fbp: 'fb.1.1700000000000.123', _gcl_au: '1.1.99.1700000000' });
  });

  test('a later page without click parameters sends the touch stored on landing', async () => {
    const page = preparePage('https://www.example.com/?fbclid=F1&utm_campaign=spring', configFor('https://example.com'));
    boot();
    await service()!.ready;
    resetPage();
    // The next page view of the same visitor: the jar is new, so carry the stored cookie over.
    const stored = page.jar.get(CLICK_COOKIE)!;
    const next = preparePage('https://app.example.com/signup', configFor('https://example.com'));
    document.cookie = `${CLICK_COOKIE}=${stored.value};domain=${stored.domain}`;
    boot();
    await service()!.captureSaasSignupIntent!();
    await next.flush();
    expect(next.beacons[0]!.snapshot.touch).toMatchObject({
      click_ids: { fbclid: 'F1' },
      utm: { utm_campaign: 'spring' },
      landing_page_url: 'https://www.example.com/',
    });
    expect(next.jar.get(CLICK_COOKIE)!.value).toBe(stored.value);
  });
});

describe('an inactive page', () => {
  const cases: [string, string, Parameters<typeof preparePage>[1]][] = [
    ['a foreign origin', 'https://evil.example.net/?gclid=abc', configFor('https://example.com')],
    ['a sibling subdomain', 'https://app.example.com/?gclid=abc', configFor('https://www.example.com')],
    ['a null domain', 'https://www.example.com/?gclid=abc', configFor(null)],
    ['an unknown site key (404)', 'https://www.example.com/?gclid=abc', 404],
    ['a network error', 'https://www.example.com/?gclid=abc', 'network-error'],
  ];
  test.each(cases)('with %s writes no cookie or storage, sends nothing and resolves API calls with null', async (_, url, config) => {
    const page = preparePage(url, config);
    boot();
    expect(await service()!.ready).toBe(false);
    const { form } = addSignupForm();
    form.requestSubmit();
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    await page.flush();
    expect(page.jar.writes).toEqual([]);
    expect(sessionStorage.length).toBe(0);
    expect(page.beacons).toEqual([]);
    expect(page.fetch).toHaveBeenCalledTimes(1);
  });
});

describe('install', () => {
  test('a page without a site key gets exactly one console warning and nothing else', async () => {
    const page = preparePage('https://www.example.com/?gclid=abc', configFor('https://example.com'), {});
    boot();
    expect(page.warn).toHaveBeenCalledTimes(1);
    expect(page.fetch).not.toHaveBeenCalled();
    expect(service()).toBeUndefined();
    expect(page.jar.writes).toEqual([]);
  });

  test('a second copy of the loader does nothing', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com'));
    boot();
    const first = service();
    boot();
    expect(service()).toBe(first);
    await first!.ready;
    expect(page.fetch).toHaveBeenCalledTimes(1);
    await service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(page.beacons).toHaveLength(1);
  });

  test("a page stub with a ready of its own (to wait for the loader) does not silence it: the loader runs and its ready replaces the stub's", async () => {
    const page = preparePage('https://www.example.com/?gclid=stub-ready', configFor('https://example.com'));
    const own = new Promise<boolean>(() => {});
    const stub = { q: [['consent', [true]]], ready: own } as unknown as Record<string, unknown>;
    (window as unknown as { __service: object }).__service = stub;
    boot();
    expect(service()).toBe(stub);
    expect(service()!.ready).not.toBe(own);
    expect(await service()!.ready).toBe(true);
    expect(JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value)).click_ids).toEqual({ gclid: 'stub-ready' });
    // A second copy still does nothing: one config request, one snapshot per intent.
    boot();
    await service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(page.fetch).toHaveBeenCalledTimes(1);
    expect(page.beacons).toHaveLength(1);
  });

  test('a tag-manager install with the key in the src query (no data attributes) runs', async () => {
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'), null);
    addScript(`${SERVICE}/loader.js?site_key=${SITE_KEY}`);
    boot();
    expect(await service()!.ready).toBe(true);
    expect(page.fetch.mock.calls[0]![0]).toBe(configUrl);
  });

  test('the collector URLs are on the origin of the loader src, the site key URL-encoded', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com'), null);
    addScript(`${SERVICE}/static/loader.js?site_key=k%201`);
    boot();
    await service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(page.fetch.mock.calls[0]![0]).toBe(`${SERVICE}/collect/v1/sites/k%201/config`);
    expect(page.beacons[0]!.url).toBe(`${SERVICE}/collect/v1/sites/k%201/snapshots`);
  });

  test('data-api overrides the service base URL', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com'), {
      'data-site-key': SITE_KEY,
      'data-api': 'https://collect.example.org',
    });
    boot();
    await service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(page.fetch.mock.calls[0]![0]).toBe(`https://collect.example.org/collect/v1/sites/${SITE_KEY}/config`);
    expect(page.beacons[0]!.url).toBe(`https://collect.example.org/collect/v1/sites/${SITE_KEY}/snapshots`);
  });

  test('the page keeps the siteKey and q it set on window.__service', async () => {
    const q: unknown[] = [];
    (window as unknown as { __service: unknown }).__service = { siteKey: SITE_KEY, q };
    const page = preparePage('https://www.example.com/', configFor('https://www.example.com'), {});
    boot();
    expect(service()!.siteKey).toBe(SITE_KEY);
    expect(service()!.q).toBe(q);
    expect(await service()!.ready).toBe(true);
    expect(page.fetch.mock.calls[0]![0]).toBe(configUrl);
  });

  test('every page view asks for the config once and leaves caching to the HTTP cache: sessionStorage is never touched', async () => {
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://www.example.com'));
    const storage = vi.spyOn(window, 'sessionStorage', 'get');
    boot();
    await service()!.captureSaasSignupIntent!();
    expect(page.fetch.mock.calls.filter((call) => call[0] === configUrl)).toHaveLength(1);
    expect(storage).not.toHaveBeenCalled();
  });
});
