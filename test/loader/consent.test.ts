// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { boot } from '../../src/loader/boot';
import { gpcRefuses } from '../../src/loader/gpc';
import type { SiteConfig } from '../../src/protocol/collector';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { addSignupForm, configFor, preparePage, resetPage, service, setGpc, SITE_KEY } from './harness';

afterEach(resetPage);

describe('whether Global Privacy Control refuses', () => {
  const config = (extra: Partial<SiteConfig> = {}): SiteConfig => ({ ...configFor('https://example.com'), ...extra });
  const table: [string, boolean | null, SiteConfig, boolean][] = [
    ['GPC on, the config honours it', true, config({ honor_gpc: true }), true],
    ['GPC on, the config says honor_gpc: false', true, config({ honor_gpc: false }), false],
    ['GPC on, a config without honor_gpc (honoured by default)', true, config({ honor_gpc: undefined }), true],
    ['GPC off', false, config({ honor_gpc: true }), false],
    ['a browser without GPC', null, config({ honor_gpc: true }), false],
  ];
  test.each(table)('%s', (_, gpc, siteConfig, refuses) => {
    if (gpc !== null) setGpc(gpc);
    expect(gpcRefuses(siteConfig)).toBe(refuses);
  });
});

const tag = { 'data-site-key': SITE_KEY, 'data-consent-required': '' };

describe('data-consent-required', () => {
  test('nothing is written or sent until consent(true); the landing click read before is then kept', async () => {
    const page = preparePage('https://www.example.com/?gclid=early', configFor('https://example.com'), tag);
    boot();
    expect(await service()!.ready).toBe(true);
    addSignupForm().form.requestSubmit();
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    await page.flush();
    expect(page.jar.writes).toEqual([]);
    expect(sessionStorage.length).toBe(0);
    expect(page.beacons).toEqual([]);

    service()!.consent!(true);
    expect(JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value)).click_ids).toEqual({ gclid: 'early' });
    expect(await service()!.captureSaasSignupIntent!()).toMatch(/^[\w-]{22}$/);
    await page.flush();
    expect(page.beacons[0]!.snapshot.touch!.click_ids).toEqual({ gclid: 'early' });
  });

  test('consent(false) stops the loader and deletes its cookies; consent(true) starts it again', async () => {
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'), tag);
    boot();
    await service()!.ready;
    service()!.consent!(true);
    await service()!.captureSaasSignupIntent!();
    expect(page.jar.get(CORRELATION_COOKIE)).toBeDefined();

    service()!.consent!(false);
    expect(page.jar.all()).toEqual([]);
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();

    service()!.consent!(true);
    expect(page.jar.get(CLICK_COOKIE)).toBeDefined();
    expect(await service()!.captureSaasSignupIntent!()).not.toBeNull();
  });

  test('without data-consent-required the loader runs until consent(false)', async () => {
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'));
    boot();
    await service()!.ready;
    expect(page.jar.get(CLICK_COOKIE)).toBeDefined();
    service()!.consent!(false);
    expect(page.jar.all()).toEqual([]);
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    await page.flush();
    expect(page.beacons).toEqual([]);
  });

  test('anything but true counts as a refusal', async () => {
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'), tag);
    boot();
    await service()!.ready;
    (service()!.consent as (v: unknown) => void)('yes');
    expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
  });
});

describe('Google Consent Mode v2', () => {
  /** What gtag() pushes: its Arguments object. */
  function gtag(..._args: unknown[]) {
    // eslint-disable-next-line prefer-rest-params
    (window as unknown as { dataLayer: unknown[] }).dataLayer.push(arguments);
  }

  test('a default of ad_storage denied (gtag Arguments) keeps the loader off until an update grants it', async () => {
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [];
    gtag('consent', 'default', { ad_storage: 'denied', analytics_storage: 'denied' });
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'));
    boot();
    await service()!.ready;
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    expect(page.jar.writes).toEqual([]);

    gtag('consent', 'update', { ad_storage: 'granted' });
    expect(page.jar.get(CLICK_COOKIE)).toBeDefined();
    expect(await service()!.captureSaasSignupIntent!()).not.toBeNull();

    gtag('consent', 'update', { ad_storage: 'denied' });
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
  });

  test("the visitor's denial in the banner (an update) deletes what the loader kept, as consent(false) does", async () => {
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [];
    gtag('consent', 'default', { ad_storage: 'denied' });
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'));
    boot();
    await service()!.ready;
    gtag('consent', 'update', { ad_storage: 'granted' });
    expect(await service()!.captureSaasSignupIntent!()).not.toBeNull();
    expect(page.jar.get(CLICK_COOKIE)).toBeDefined();
    expect(page.jar.get(CORRELATION_COOKIE)).toBeDefined();

    gtag('consent', 'update', { ad_storage: 'denied' });
    expect(page.jar.get(CLICK_COOKIE), 'the kept click is gone').toBeUndefined();
    expect(page.jar.get(CORRELATION_COOKIE), 'the token a backend would report is gone').toBeUndefined();
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
  });

  test("a default denial (the page's state before any answer) deletes nothing: an answer restored later finds the click", async () => {
    const landing = preparePage('https://www.example.com/?gclid=kept', configFor('https://example.com'));
    boot();
    await service()!.ready;
    const kept = landing.jar.all().filter((c) => c.name.startsWith('cnv_'));
    expect(kept.map((c) => c.name)).toContain(CLICK_COOKIE);
    resetPage();
    // The next page: the consent tool sets its default before the loader and restores the visitor's answer after it.
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [];
    gtag('consent', 'default', { ad_storage: 'denied' });
    const next = preparePage('https://www.example.com/pricing', configFor('https://example.com'));
    for (const c of kept) document.cookie = `${c.name}=${c.value}${c.domain ? `;domain=${c.domain}` : ''}`;
    boot();
    await service()!.ready;
    expect(next.jar.get(CLICK_COOKIE), 'kept through the default').toBeDefined();
    gtag('consent', 'update', { ad_storage: 'granted' });
    expect(await service()!.captureSaasSignupIntent!()).not.toBeNull();
    await next.flush();
    expect(next.beacons[0]!.snapshot.touch).toMatchObject({ click_ids: { gclid: 'kept' } });
  });

  test('array entries count too, and the page keeps its own push result', async () => {
    const dataLayer: unknown[] = [['consent', 'default', { ad_storage: 'granted' }]];
    (window as unknown as { dataLayer: unknown[] }).dataLayer = dataLayer;
    preparePage('https://www.example.com/', configFor('https://example.com'));
    boot();
    await service()!.ready;
    expect(await service()!.captureSaasSignupIntent!()).not.toBeNull();
    expect(dataLayer.push(['consent', 'update', { ad_storage: 'denied' }])).toBe(2);
    expect(dataLayer).toHaveLength(2);
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
  });

  test('a denial wins over consent(true): nothing is written or sent', async () => {
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [['consent', 'default', { ad_storage: 'denied' }]];
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'), tag);
    boot();
    await service()!.ready;
    service()!.consent!(true);
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    await page.flush();
    expect(page.jar.writes).toEqual([]);
    expect(page.beacons).toEqual([]);
  });

  test('a dataLayer the page creates after the loader starts is followed too', async () => {
    preparePage('https://www.example.com/', configFor('https://example.com'));
    boot();
    await service()!.ready;
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [['consent', 'default', { ad_storage: 'denied' }]];
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
  });
});

describe('Global Privacy Control', () => {
  test('with GPC on the loader stays off when the config honours it', async () => {
    setGpc(true);
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com', { honor_gpc: true }));
    boot();
    expect(await service()!.ready).toBe(true);
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    expect(page.jar.writes).toEqual([]);
  });

  test('consent(true) does not override an honoured GPC', async () => {
    setGpc(true);
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'), tag);
    boot();
    await service()!.ready;
    service()!.consent!(true);
    expect(await service()!.captureSaasSignupIntent!()).toBeNull();
    expect(page.jar.writes).toEqual([]);
  });

  test('with GPC on the loader runs when the config says honor_gpc: false', async () => {
    setGpc(true);
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com', { honor_gpc: false }));
    boot();
    await service()!.ready;
    expect(await service()!.captureSaasSignupIntent!()).not.toBeNull();
    expect(page.jar.get(CLICK_COOKIE)).toBeDefined();
  });
});

describe('dataLayer traffic', () => {
  test('pushes that do not change ad_storage write nothing', async () => {
    const dataLayer: unknown[] = [];
    (window as unknown as { dataLayer: unknown[] }).dataLayer = dataLayer;
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'));
    boot();
    await service()!.ready;
    const writes = page.jar.writes.length;
    dataLayer.push({ event: 'gtm.dom' }, { event: 'gtm.load' });
    dataLayer.push(['consent', 'update', { ad_storage: 'granted' }]);
    expect(page.jar.writes).toHaveLength(writes);
  });
});
