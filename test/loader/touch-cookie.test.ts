// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { loaderCookies } from '../../src/loader/loader-cookies';
import { preferredTouch, storedTouch, storeTouch } from '../../src/loader/touch-cookie';
import type { Touch } from '../../src/protocol/collector';
import { CLICK_COOKIE, CLICK_COOKIE_DAYS } from '../../src/protocol/cookies';
import { installCookieJar, type CookieJar } from './cookie-jar';
import { resetPage, setUrl } from './harness';

let jar: CookieJar;
afterEach(() => {
  jar.restore();
  resetPage();
});

const touch = (gclid: string, utm: Touch['utm'] = {}): Touch => ({
  click_ids: { gclid },
  utm,
  landing_page_url: `https://www.example.com/?gclid=${gclid}`,
  referrer: 'https://www.google.com/',
  captured_at: '2026-11-20T10:00:00.000Z',
});

describe('the stored touch (cnv_click)', () => {
  test('is written URL-encoded (through js-cookie) for 90 days and read back whole', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    const write = vi.fn(loaderCookies(location));
    storeTouch(touch('g1', { utm_source: 'google; evil=1' }), write);
    expect(write).toHaveBeenCalledWith(CLICK_COOKIE, expect.any(String), CLICK_COOKIE_DAYS * 86400);
    expect(jar.get(CLICK_COOKIE)!.value).not.toMatch(/[;,\s"]/);
    expect(storedTouch()).toEqual(touch('g1', { utm_source: 'google; evil=1' }));
  });

  test('a cookie written URL-encoded by an earlier loader version is still read', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    document.cookie = `${CLICK_COOKIE}=${encodeURIComponent(JSON.stringify(touch('old')))}`;
    expect(storedTouch()).toEqual(touch('old'));
  });

  test('a new touch replaces the old one whole: old UTMs never mix with a new click', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    const write = loaderCookies(location);
    storeTouch(touch('old', { utm_campaign: 'old-campaign' }), write);
    storeTouch(touch('new'), write);
    expect(storedTouch()).toEqual(touch('new'));
  });

  test('no cookie or a cookie that is not JSON is no touch', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    expect(storedTouch()).toBeUndefined();
    document.cookie = `${CLICK_COOKIE}=%7Bbroken`;
    expect(storedTouch()).toBeUndefined();
  });
});

describe('which touch is kept', () => {
  const at = (t: Touch, captured_at: string): Touch => ({ ...t, captured_at });
  const utmOnly = (campaign: string, captured_at: string): Touch => ({
    click_ids: {},
    utm: { utm_source: 'newsletter', utm_campaign: campaign },
    landing_page_url: `https://www.example.com/?utm_campaign=${campaign}`,
    referrer: null,
    captured_at,
  });

  test('a newer ad click replaces an older one whole', () => {
    const older = at(touch('A', { utm_campaign: 'spring' }), '2026-11-20T10:00:00.000Z');
    const newer = at(touch('B'), '2026-11-21T10:00:00.000Z');
    expect(preferredTouch(older, newer)).toBe(newer);
  });

  test('a later UTM-only visit never replaces a stored ad click (journey 1)', () => {
    const ad = at(touch('A'), '2026-11-20T10:00:00.000Z');
    expect(preferredTouch(ad, utmOnly('news', '2026-11-22T10:00:00.000Z'))).toBe(ad);
  });

  test('an ad click replaces a stored UTM-only touch, and a newer UTM-only touch replaces an older one', () => {
    const news = utmOnly('news', '2026-11-20T10:00:00.000Z');
    const ad = at(touch('A'), '2026-11-19T10:00:00.000Z');
    expect(preferredTouch(news, ad)).toBe(ad);
    const later = utmOnly('later', '2026-11-21T10:00:00.000Z');
    expect(preferredTouch(news, later)).toBe(later);
  });

  test('an older ad touch (another tab landed later) does not overwrite a newer stored one; a tie keeps the stored', () => {
    const stored = at(touch('B'), '2026-11-21T10:00:00.000Z');
    expect(preferredTouch(stored, at(touch('A'), '2026-11-20T10:00:00.000Z'))).toBe(stored);
    expect(preferredTouch(stored, at(touch('B'), '2026-11-21T10:00:00.000Z'))).toBe(stored);
  });

  test('the same click read again later (a reload, a route change that keeps the query) keeps the stored touch', () => {
    const stored = at(touch('A', { utm_campaign: 'spring', utm_source: 'google' }), '2026-11-20T10:00:00.000Z');
    // The same ids in another order of the URL, on another page of the site.
    const again: Touch = {
      click_ids: { ...stored.click_ids }, utm: { utm_source: 'google', utm_campaign: 'spring' },
      landing_page_url: 'https://www.example.com/welcome?utm_source=google', referrer: null, captured_at: '2026-11-20T10:05:00.000Z',
    };
    expect(preferredTouch(stored, again)).toBe(stored);
    const news = utmOnly('news', '2026-11-20T10:00:00.000Z');
    expect(preferredTouch(news, utmOnly('news', '2026-11-20T11:00:00.000Z'))).toBe(news);
    // Another value of the same id is another click.
    const other = at(touch('B', { utm_campaign: 'spring', utm_source: 'google' }), '2026-11-20T10:05:00.000Z');
    expect(preferredTouch(stored, other)).toBe(other);
  });

  test("a newer click wins over a stored one dated in the visitor's future (stored while the clock ran ahead)", () => {
    // The visitor's clock, set right again: the stored click says 2027, the fresh one now.
    vi.useFakeTimers({ now: Date.parse('2026-11-21T09:00:00Z'), toFake: ['Date'] });
    try {
      const ahead = at(touch('A'), '2027-01-01T00:00:00.000Z');
      const fresh = at(touch('B'), '2026-11-21T09:00:00.000Z');
      expect(preferredTouch(ahead, fresh)).toBe(fresh);
      const newsAhead = utmOnly('ahead', '2027-01-01T00:00:00.000Z');
      const news = utmOnly('news', '2026-11-21T09:00:00.000Z');
      expect(preferredTouch(newsAhead, news)).toBe(news);
      // The rest of the rule holds: the same click read again keeps the stored touch, a UTM-only visit never
      // replaces a stored ad click.
      expect(preferredTouch(ahead, at(touch('A'), '2026-11-21T09:00:00.000Z'))).toBe(ahead);
      expect(preferredTouch(ahead, news)).toBe(ahead);
      // Once the clock has passed the stored time it is no longer in the future: an older click does not win.
      vi.setSystemTime(Date.parse('2027-01-02T00:00:00Z'));
      expect(preferredTouch(ahead, fresh)).toBe(ahead);
    } finally {
      vi.useRealTimers();
    }
  });

  test('a touch read again on a revisit (reload, back/forward, popstate) never replaces a stored touch of its kind', () => {
    // Tab A's click read again on a reload, after tab B's newer click was stored: its time is the reading's, not the click's.
    const b = at(touch('B'), '2026-11-21T10:00:00.000Z');
    const reloadedA = at(touch('A'), '2026-11-21T10:05:00.000Z');
    expect(preferredTouch(b, reloadedA, true)).toBe(b);
    expect(preferredTouch(b, reloadedA)).toBe(reloadedA);
    const news = utmOnly('news', '2026-11-20T10:00:00.000Z');
    expect(preferredTouch(news, utmOnly('old', '2026-11-21T10:00:00.000Z'), true)).toBe(news);
    // Where any touch would be kept, a revisit's is: nothing stored, or an ad click over a UTM-only visit.
    expect(preferredTouch(undefined, reloadedA, true)).toBe(reloadedA);
    expect(preferredTouch(news, reloadedA, true)).toBe(reloadedA);
    // The stored ad click is not replaced by a revisit's UTM-only visit either.
    expect(preferredTouch(b, utmOnly('news', '2026-11-21T10:05:00.000Z'), true)).toBe(b);
  });

  test('either side missing keeps the other; both missing is null', () => {
    const t = touch('A');
    expect(preferredTouch(undefined, t)).toBe(t);
    expect(preferredTouch(t, null)).toBe(t);
    expect(preferredTouch(undefined, null)).toBeNull();
  });
});
