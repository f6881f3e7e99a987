// @vitest-environment happy-dom
/** The seven journeys of issue 10 that used to lose the click, at the loader's level (the browser specs run them end to end). */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { boot } from '../../src/loader/boot';
import { addLinker } from '../../src/loader/linker';
import { CLICK_COOKIE, CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../../src/protocol/cookies';
import { LINKER_TTL_SECONDS } from '../../src/protocol/signals';
import { addSignupForm, configFor, preparePage, resetPage, service, SITE_KEY, type Page } from './harness';

afterEach(resetPage);

const storedTouchOf = (page: Page) => JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value));

/** The next page view of the same visitor: the jar is per page in these tests, so carry the loader's cookies over. */
function nextPage(previous: Page, url: string, config = configFor('https://example.com'), tag?: Record<string, string>): Page {
  const kept = previous.jar.all().filter((c) => c.name.startsWith('cnv_'));
  resetPage();
  const page = preparePage(url, config, tag);
  for (const c of kept) document.cookie = `${c.name}=${c.value}${c.domain ? `;domain=${c.domain}` : ''}`;
  return page;
}

describe('1. a UTM-only visit after an ad click', () => {
  test('keeps the ad click: the newsletter visit is not stored over it, and the signup sends the gclid', async () => {
    let page = preparePage('https://www.example.com/?gclid=AD1&utm_source=google', configFor('https://example.com'));
    boot();
    await service()!.ready;
    page = nextPage(page, 'https://www.example.com/blog?utm_source=newsletter&utm_medium=email');
    boot();
    await service()!.captureSaasSignupIntent!();
    await page.flush();
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'AD1' });
    expect(page.beacons[0]!.snapshot.touch).toMatchObject({ click_ids: { gclid: 'AD1' }, utm: { utm_source: 'google' } });
  });

  test('is stored when no ad click is', async () => {
    const page = preparePage('https://www.example.com/?utm_source=newsletter', configFor('https://example.com'));
    boot();
    await service()!.ready;
    expect(storedTouchOf(page).utm).toEqual({ utm_source: 'newsletter' });
  });
});

describe('2. a newer ad click after an abandoned intent', () => {
  test('gets a fresh token, so the signup token stands for the newer click only', async () => {
    // The clock is the test's: the second click lands a minute later (two landings in one millisecond would tie, and a
    // tie keeps the stored touch; the unit suite on a busy machine once ran both in one).
    vi.useFakeTimers({ now: Date.parse('2026-11-21T09:00:00Z'), toFake: ['Date'] });
    try {
      let page = preparePage('https://www.example.com/?gclid=A', configFor('https://example.com'));
      boot();
      const abandoned = await service()!.captureSaasSignupIntent!();
      vi.setSystemTime(Date.parse('2026-11-21T09:01:00Z'));
      page = nextPage(page, 'https://www.example.com/?gclid=B');
      boot();
      await service()!.ready;
      expect(page.jar.get(CORRELATION_COOKIE), 'the newer click ends the older token').toBeUndefined();
      const signup = await service()!.captureSaasSignupIntent!();
      await page.flush();
      expect(signup).toMatch(CORRELATION_TOKEN_PATTERN);
      expect(signup).not.toBe(abandoned);
      expect(page.beacons[0]!.snapshot).toMatchObject({ correlation_token: signup, touch: { click_ids: { gclid: 'B' } } });
    } finally {
      vi.useRealTimers();
    }
  });

  test("wins over a click stored while the visitor's clock ran ahead, and ends that click's token", async () => {
    vi.useFakeTimers({ now: Date.parse('2027-06-01T09:00:00Z'), toFake: ['Date'] });
    try {
      let page = preparePage('https://www.example.com/?gclid=AHEAD', configFor('https://example.com'));
      boot();
      const abandoned = await service()!.captureSaasSignupIntent!();
      // The clock is set right (back half a year); the visitor clicks another ad.
      vi.setSystemTime(Date.parse('2026-11-21T09:00:00Z'));
      page = nextPage(page, 'https://www.example.com/?gclid=NOW');
      boot();
      await service()!.ready;
      expect(storedTouchOf(page)).toMatchObject({ click_ids: { gclid: 'NOW' }, captured_at: '2026-11-21T09:00:00.000Z' });
      expect(page.jar.get(CORRELATION_COOKIE), 'the newer click ends the older token').toBeUndefined();
      const signup = await service()!.captureSaasSignupIntent!();
      await page.flush();
      expect(signup).not.toBe(abandoned);
      expect(page.beacons[0]!.snapshot).toMatchObject({ correlation_token: signup, touch: { click_ids: { gclid: 'NOW' } } });
    } finally {
      vi.useRealTimers();
    }
  });

  test('a page view without a new click keeps the token (one signup, one token)', async () => {
    let page = preparePage('https://www.example.com/?gclid=A', configFor('https://example.com'));
    boot();
    const first = await service()!.captureSaasSignupIntent!();
    page = nextPage(page, 'https://www.example.com/pricing');
    boot();
    expect(await service()!.captureSaasSignupIntent!()).toBe(first);
  });
});

describe('3. a router that strips the query before the async loader runs', () => {
  test('the click is read from the navigation entry, the URL the document was navigated to', async () => {
    const landing = 'https://www.example.com/?gclid=ROUTED&utm_campaign=spring';
    const page = preparePage('https://www.example.com/', configFor('https://example.com'));
    vi.spyOn(performance, 'getEntriesByType').mockReturnValue([{ name: landing }] as unknown as PerformanceEntryList);
    boot();
    await service()!.ready;
    expect(storedTouchOf(page)).toMatchObject({ click_ids: { gclid: 'ROUTED' }, utm: { utm_campaign: 'spring' }, landing_page_url: 'https://www.example.com/' });
  });

  test('signals in the address bar win over the navigation entry', async () => {
    const page = preparePage('https://www.example.com/?gclid=NOW', configFor('https://example.com'));
    vi.spyOn(performance, 'getEntriesByType').mockReturnValue([{ name: 'https://www.example.com/?gclid=THEN' }] as unknown as PerformanceEntryList);
    boot();
    await service()!.ready;
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'NOW' });
  });
});

describe('cookie domain from the config', () => {
  test('cookie_domain is used as the Domain without a probe cookie', async () => {
    const page = preparePage('https://www.shop.example.com/?gclid=g', configFor('https://shop.example.com', { cookie_domain: 'shop.example.com' }));
    boot();
    await service()!.ready;
    expect(page.jar.get(CLICK_COOKIE)!.domain).toBe('shop.example.com');
    expect(page.jar.writes.filter((w) => w.startsWith('cnv_probe='))).toEqual([]);
  });

  test('cookie_domain null (localhost, IP addresses) writes host-only cookies, and nothing probes for a parent domain', async () => {
    const page = preparePage('http://127.0.0.1:8080/?gclid=g', configFor('http://127.0.0.1:8080'));
    boot();
    await service()!.ready;
    expect(page.jar.get(CLICK_COOKIE)).toMatchObject({ domain: undefined });
    expect(page.jar.writes.filter((w) => /domain=/i.test(w) || w.startsWith('cnv_probe='))).toEqual([]);
  });
});

describe('5. a signup form inside a web component (open shadow root)', () => {
  test('a click on its submit button is one intent, found through composedPath()', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://example.com'));
    boot();
    await service()!.ready;
    const host = document.createElement('signup-widget');
    document.body.appendChild(host);
    const root = host.attachShadow({ mode: 'open' });
    root.innerHTML = '<form data-service-signup-intent action="/signup"><input name="email"><button type="submit"><span>Join</span></button></form>';
    root.querySelector('form')!.addEventListener('submit', (event) => event.preventDefault());
    (root.querySelector('span') as HTMLElement).click();
    expect(page.jar.get(CORRELATION_COOKIE)!.value).toMatch(CORRELATION_TOKEN_PATTERN);
    await page.flush();
    expect(page.beacons.map((b) => b.snapshot.trigger)).toEqual(['form_submit']);
  });
});

/** Adds a link to the page, clicks it (happy-dom does not navigate) and returns the URL it then points to. */
function follow(href: string): URL {
  const link = document.createElement('a');
  link.href = href;
  link.addEventListener('click', (event) => event.preventDefault());
  document.body.appendChild(link);
  link.click();
  return new URL(link.href);
}

describe('6. consent given on a later page (data-url-passthrough)', () => {
  const tag = { 'data-site-key': SITE_KEY, 'data-consent-required': '', 'data-url-passthrough': '' };

  test('before consent, same-site links carry the landing click ids and UTM parameters; nothing is written or sent', async () => {
    const page = preparePage('https://www.example.com/?gclid=PT&utm_source=google&other=x', configFor('https://example.com'), tag);
    boot();
    await service()!.ready;
    const next = follow('https://app.example.com/pricing?plan=pro');
    expect(Object.fromEntries(next.searchParams)).toEqual({ plan: 'pro', gclid: 'PT', utm_source: 'google' });
    expect(follow('https://www.example.com/?gclid=mine').searchParams.getAll('gclid'), 'a parameter already there is kept').toEqual(['mine']);
    expect(follow('https://partner.example.net/').search, 'another site gets nothing').toBe('');
    addSignupForm().form.requestSubmit();
    await page.flush();
    expect(page.jar.writes).toEqual([]);
    expect(page.beacons).toEqual([]);
  });

  test('on the page where consent is given, the carried click is stored and the signup sends it', async () => {
    const page = preparePage('https://app.example.com/pricing?plan=pro&gclid=PT&utm_source=google', configFor('https://example.com'), tag);
    boot();
    await service()!.ready;
    service()!.consent!(true);
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'PT' });
    expect(follow('https://app.example.com/next').search, 'consented: no more passthrough').toBe('');
  });

  test('without the attribute links are left alone', async () => {
    preparePage('https://www.example.com/?gclid=PT', configFor('https://example.com'), { 'data-site-key': SITE_KEY, 'data-consent-required': '' });
    boot();
    await service()!.ready;
    expect(follow('https://www.example.com/next').search).toBe('');
  });
});

describe('7. a site on two registrable domains (data-linker)', () => {
  const marketing = { 'data-site-key': SITE_KEY, 'data-linker': 'example-app.io' };
  const app = { 'data-site-key': SITE_KEY, 'data-linker': 'example.com' };

  test('a link to the listed domain carries the touch and the token in _cnv, expiring two minutes after', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-21T09:00:00Z'), toFake: ['Date'] });
    preparePage('https://www.example.com/?gclid=LNK', configFor('https://example.com'), marketing);
    boot();
    const token = await service()!.captureSaasSignupIntent!();
    const url = follow('https://www.example-app.io/signup');
    const [expires, carriedToken, touch] = JSON.parse(url.searchParams.get('_cnv')!);
    expect(expires).toBe(Date.now() / 1000 + LINKER_TTL_SECONDS);
    expect(carriedToken).toBe(token);
    expect(touch.click_ids).toEqual({ gclid: 'LNK' });
    expect(follow('https://www.example.com/pricing').searchParams.has('_cnv'), 'same domain: no linker').toBe(false);
    vi.useRealTimers();
  });

  test('the other domain takes the touch and token from _cnv, removes it from the address bar, and signs up with them', async () => {
    const url = new URL('https://www.example-app.io/signup?plan=pro');
    const touch = { click_ids: { gclid: 'LNK' }, utm: {}, landing_page_url: 'https://www.example.com/?gclid=LNK', referrer: null, captured_at: '2026-11-21T09:00:00.000Z' };
    addLinker(url, { touch, token: 'TTTTTTTTTTTTTTTTTTTTTT' }, Date.now());
    const page = preparePage(url.href, configFor('https://example-app.io'), app);
    boot();
    await service()!.ready;
    expect(location.href).toBe('https://www.example-app.io/signup?plan=pro');
    expect(storedTouchOf(page)).toEqual(touch);
    expect(await service()!.captureSaasSignupIntent!()).toBe('TTTTTTTTTTTTTTTTTTTTTT');
    await page.flush();
    expect(page.beacons[0]!.snapshot.touch).toEqual(touch);
  });

  test('a router that cleaned the address bar first: _cnv is read from the navigation entry', async () => {
    const url = new URL('https://www.example-app.io/signup');
    const touch = { click_ids: { gclid: 'NAV' }, utm: {}, landing_page_url: 'https://www.example.com/?gclid=NAV', referrer: null, captured_at: '2026-11-21T09:00:00.000Z' };
    addLinker(url, { touch, token: undefined }, Date.now());
    const page = preparePage('https://www.example-app.io/signup', configFor('https://example-app.io'), app);
    vi.spyOn(performance, 'getEntriesByType').mockReturnValue([{ name: url.href }] as unknown as PerformanceEntryList);
    boot();
    await service()!.ready;
    expect(storedTouchOf(page)).toEqual(touch);
  });

  test('a landing with its own ad click keeps it over the one _cnv carried (the newer click wins)', async () => {
    const url = new URL('https://www.example-app.io/signup?gclid=OWN');
    const touch = { click_ids: { gclid: 'LNK' }, utm: {}, landing_page_url: 'https://www.example.com/?gclid=LNK', referrer: null, captured_at: '2026-11-21T09:00:00.000Z' };
    addLinker(url, { touch, token: 'TTTTTTTTTTTTTTTTTTTTTT' }, Date.now());
    const page = preparePage(url.href, configFor('https://example-app.io'), app);
    boot();
    await service()!.ready;
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'OWN' });
    expect(page.jar.get(CORRELATION_COOKIE)).toBeUndefined();
  });

  test('an expired _cnv, or one claiming to last longer than two minutes, is removed and ignored', async () => {
    const touch = { click_ids: { gclid: 'OLD' }, utm: {}, landing_page_url: 'https://www.example.com/', referrer: null, captured_at: '2026-11-21T09:00:00.000Z' };
    for (const written of [Date.now() - (LINKER_TTL_SECONDS + 1) * 1000, Date.now() + 3600_000]) {
      const url = new URL('https://www.example-app.io/signup');
      addLinker(url, { touch, token: undefined }, written);
      const page = preparePage(url.href, configFor('https://example-app.io'), app);
      boot();
      await service()!.ready;
      expect(location.search).toBe('');
      expect(page.jar.get(CLICK_COOKIE)).toBeUndefined();
      resetPage();
    }
  });

  test('the page is not active (a foreign origin): _cnv stays where it is and nothing is read', async () => {
    const url = new URL('https://www.example-app.io/signup');
    addLinker(url, { touch: null, token: 'TTTTTTTTTTTTTTTTTTTTTT' }, Date.now());
    const page = preparePage(url.href, configFor('https://elsewhere.example'), app);
    boot();
    expect(await service()!.ready).toBe(false);
    expect(location.href).toBe(url.href);
    expect(page.jar.writes).toEqual([]);
  });

  test('not consented: no _cnv is added, and a received one is not written until consent', async () => {
    preparePage('https://www.example.com/?gclid=LNK', configFor('https://example.com'), { ...marketing, 'data-consent-required': '' });
    boot();
    await service()!.ready;
    expect(follow('https://www.example-app.io/signup').searchParams.has('_cnv')).toBe(false);
    resetPage();
    const url = new URL('https://www.example-app.io/signup');
    addLinker(url, { touch: null, token: 'TTTTTTTTTTTTTTTTTTTTTT' }, Date.now());
    const page = preparePage(url.href, configFor('https://example-app.io'), { ...app, 'data-consent-required': '' });
    boot();
    await service()!.ready;
    expect(page.jar.writes).toEqual([]);
    service()!.consent!(true);
    expect(page.jar.get(CORRELATION_COOKIE)!.value).toBe('TTTTTTTTTTTTTTTTTTTTTT');
  });
});
