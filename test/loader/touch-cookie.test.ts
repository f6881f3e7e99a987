// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { storedTouch, storeTouch } from '../../src/loader/touch-cookie';
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
  test('is written URL-encoded for 90 days and read back whole', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    const write = vi.fn((name: string, value: string) => (document.cookie = `${name}=${value}`));
    storeTouch(touch('g1', { utm_source: 'google; evil=1' }), write);
    expect(write).toHaveBeenCalledWith(CLICK_COOKIE, expect.not.stringMatching(/[;,\s"]/), CLICK_COOKIE_DAYS * 86400);
    expect(storedTouch()).toEqual(touch('g1', { utm_source: 'google; evil=1' }));
  });

  test('a new touch replaces the old one whole: old UTMs never mix with a new click', () => {
    setUrl('https://www.example.com/');
    jar = installCookieJar();
    const write = (name: string, value: string) => (document.cookie = `${name}=${value}`);
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
