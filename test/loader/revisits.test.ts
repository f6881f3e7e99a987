// @vitest-environment happy-dom
/**
 * A page load that is no new arrival from an ad (a reload, a back/forward load, a session the browser restored) reads
 * the same click ids again: they must not take the credit from a newer ad click stored since, in another tab.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { boot } from '../../src/loader/boot';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { configFor, preparePage, resetPage, service, type Page } from './harness';

const SITE = 'https://www.example.com';

beforeEach(() => {
  // The test's clock: each landing is a minute after the one before.
  vi.useFakeTimers({ now: Date.parse('2026-11-21T09:00:00Z'), toFake: ['Date'] });
});
afterEach(() => {
  resetPage();
  vi.useRealTimers();
});

const minuteLater = () => vi.setSystemTime(Date.now() + 60_000);
const storedTouchOf = (page: Page) => JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value));

/**
 * Loads `url` as a page of the same visitor (the cookies of `previous` carried over: one browser, one cookie store),
 * the navigation entry saying how the browser came to it: 'navigate' (a link, an ad), 'reload', 'back_forward'.
 */
async function load(url: string, type: string, previous?: Page): Promise<Page> {
  const kept = previous ? previous.jar.all().filter((c) => c.name.startsWith('cnv_')) : [];
  if (previous) resetPage();
  const page = preparePage(url, configFor('https://example.com'));
  for (const c of kept) document.cookie = `${c.name}=${c.value}${c.domain ? `;domain=${c.domain}` : ''}`;
  vi.spyOn(performance, 'getEntriesByType').mockReturnValue([{ name: url, type }] as unknown as PerformanceEntryList);
  boot();
  await service()!.ready;
  return page;
}

/** The touch of the snapshot a signup on the current page sends. */
async function signupTouch(page: Page) {
  await service()!.captureSaasSignupIntent!();
  await page.flush();
  return page.beacons.at(-1)!.snapshot.touch!;
}

describe('tab A (gclid=A), then tab B (a newer click, gclid=B), then tab A again', () => {
  for (const type of ['reload', 'back_forward']) {
    test(`a ${type} of tab A keeps B stored and in the signup's snapshot, with B's token`, async () => {
      let page = await load(`${SITE}/?gclid=A`, 'navigate');
      minuteLater();
      page = await load(`${SITE}/?gclid=B`, 'navigate', page);
      const token = await service()!.captureSaasSignupIntent!();
      const b = storedTouchOf(page);
      minuteLater();
      page = await load(`${SITE}/?gclid=A`, type, page);
      expect(storedTouchOf(page), 'the stored click stays B, as stored').toEqual(b);
      expect(page.jar.get(CORRELATION_COOKIE)!.value, "B's token stays").toBe(token);
      expect((await signupTouch(page)).click_ids).toEqual({ gclid: 'B' });
    });
  }

  test('across platforms: a reloaded fbclid tab does not beat a newer gclid', async () => {
    let page = await load(`${SITE}/?fbclid=F`, 'navigate');
    minuteLater();
    page = await load(`${SITE}/?gclid=G`, 'navigate', page);
    minuteLater();
    page = await load(`${SITE}/?fbclid=F`, 'reload', page);
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'G' });
    expect((await signupTouch(page)).click_ids).toEqual({ gclid: 'G' });
  });

  test('a reload whose router already cleaned the address bar reads the navigation entry, and still keeps B', async () => {
    let page = await load(`${SITE}/?gclid=A`, 'navigate');
    minuteLater();
    page = await load(`${SITE}/?gclid=B`, 'navigate', page);
    minuteLater();
    const kept = page.jar.all().filter((c) => c.name.startsWith('cnv_'));
    resetPage();
    page = preparePage(`${SITE}/`, configFor('https://example.com'));
    for (const c of kept) document.cookie = `${c.name}=${c.value}${c.domain ? `;domain=${c.domain}` : ''}`;
    vi.spyOn(performance, 'getEntriesByType').mockReturnValue([{ name: `${SITE}/?gclid=A`, type: 'reload' }] as unknown as PerformanceEntryList);
    boot();
    await service()!.ready;
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'B' });
  });

  test('a new arrival (navigate) on an older click link is still a new click: it wins, as before', async () => {
    let page = await load(`${SITE}/?gclid=A`, 'navigate');
    minuteLater();
    page = await load(`${SITE}/?gclid=B`, 'navigate', page);
    minuteLater();
    page = await load(`${SITE}/?gclid=A`, 'navigate', page);
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'A' });
  });
});

describe('what a reloaded page still takes', () => {
  test('a reload of the latest click keeps it, as stored (its time and token)', async () => {
    let page = await load(`${SITE}/?gclid=A`, 'navigate');
    minuteLater();
    page = await load(`${SITE}/?gclid=B`, 'navigate', page);
    const token = await service()!.captureSaasSignupIntent!();
    const b = storedTouchOf(page);
    minuteLater();
    page = await load(`${SITE}/?gclid=B`, 'reload', page);
    expect(storedTouchOf(page)).toEqual(b);
    expect(page.jar.get(CORRELATION_COOKIE)!.value).toBe(token);
  });

  test('a reload with nothing stored (first load before consent, cookies cleared) takes its click', async () => {
    const page = await load(`${SITE}/?gclid=A`, 'reload');
    expect(storedTouchOf(page)).toMatchObject({ click_ids: { gclid: 'A' }, captured_at: '2026-11-21T09:00:00.000Z' });
    expect((await signupTouch(page)).click_ids).toEqual({ gclid: 'A' });
  });

  test('a back_forward load with nothing stored takes its click too', async () => {
    const page = await load(`${SITE}/?msclkid=M`, 'back_forward');
    expect(storedTouchOf(page).click_ids).toEqual({ msclkid: 'M' });
  });

  test('a reloaded ad click still beats a stored UTM-only visit (an ad click beats a non-ad touch, whatever came later)', async () => {
    let page = await load(`${SITE}/?utm_source=newsletter`, 'navigate');
    minuteLater();
    page = await load(`${SITE}/?gclid=A`, 'reload', page);
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'A' });
  });

  test('a reloaded UTM-only visit does not replace a newer UTM-only visit', async () => {
    let page = await load(`${SITE}/?utm_source=old`, 'navigate');
    minuteLater();
    page = await load(`${SITE}/?utm_source=new`, 'navigate', page);
    minuteLater();
    page = await load(`${SITE}/?utm_source=old`, 'reload', page);
    expect(storedTouchOf(page).utm).toEqual({ utm_source: 'new' });
  });
});

describe('single-page apps', () => {
  test('going back (popstate) to the landing of an older click keeps the newer click stored since', async () => {
    const page = await load(`${SITE}/?gclid=A`, 'navigate');
    history.pushState({}, '', '/pricing');
    minuteLater();
    // Tab B, meanwhile: a newer click, stored in the shared cookie.
    const b = { click_ids: { gclid: 'B' }, utm: {}, landing_page_url: `${SITE}/?gclid=B`, referrer: null, captured_at: new Date().toISOString() };
    document.cookie = `${CLICK_COOKIE}=${encodeURIComponent(JSON.stringify(b))};domain=example.com`;
    minuteLater();
    // Back in tab A: the browser's back button returns to the landing's history entry.
    history.replaceState({}, '', '/?gclid=A');
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(storedTouchOf(page)).toEqual(b);
    expect((await signupTouch(page)).click_ids).toEqual({ gclid: 'B' });
  });

  test('a route change (pushState) to a decorated URL on a reloaded page is a new click', async () => {
    let page = await load(`${SITE}/?gclid=A`, 'navigate');
    minuteLater();
    page = await load(`${SITE}/?gclid=B`, 'navigate', page);
    minuteLater();
    page = await load(`${SITE}/?gclid=A`, 'reload', page);
    minuteLater();
    history.pushState({}, '', '/promo?gclid=C');
    expect(storedTouchOf(page).click_ids).toEqual({ gclid: 'C' });
  });

  test('a page shown again from the back/forward cache keeps its first reading: the newer click stored since wins', async () => {
    // The loader does not run again (no pageshow listener): the page's touch keeps the time it was first read.
    const page = await load(`${SITE}/?gclid=A`, 'navigate');
    minuteLater();
    const b = { click_ids: { gclid: 'B' }, utm: {}, landing_page_url: `${SITE}/?gclid=B`, referrer: null, captured_at: new Date().toISOString() };
    document.cookie = `${CLICK_COOKIE}=${encodeURIComponent(JSON.stringify(b))};domain=example.com`;
    minuteLater();
    window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
    expect((await signupTouch(page)).click_ids).toEqual({ gclid: 'B' });
    expect(storedTouchOf(page)).toEqual(b);
  });
});
