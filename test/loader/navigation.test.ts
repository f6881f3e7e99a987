// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { boot } from '../../src/loader/boot';
import { watchNavigation } from '../../src/loader/navigation';
import { CLICK_COOKIE } from '../../src/protocol/cookies';
import { configFor, preparePage, resetPage, service } from './harness';

afterEach(resetPage);

const storedClickIds = (page: ReturnType<typeof preparePage>) =>
  JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value)).click_ids;

describe('client-side navigation', () => {
  test('pushState and popstate notify; pushState still changes the URL', () => {
    preparePage('https://www.example.com/', 404, null);
    const onNavigate = vi.fn();
    watchNavigation(onNavigate);
    history.pushState({}, '', '/next?gclid=x');
    expect(location.pathname).toBe('/next');
    expect(onNavigate).toHaveBeenCalledTimes(1);
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(onNavigate).toHaveBeenCalledTimes(2);
  });

  test('a pushState to a decorated URL records a new touch that replaces the old one whole', async () => {
    // The clock is the test's: the new touch is a minute newer (in one millisecond a tie would keep the stored one).
    vi.useFakeTimers({ now: Date.parse('2026-11-21T09:00:00Z'), toFake: ['Date'] });
    try {
      const page = preparePage('https://www.example.com/?gclid=old&utm_source=old', configFor('https://example.com'));
      boot();
      await service()!.ready;
      vi.setSystemTime(Date.parse('2026-11-21T09:01:00Z'));
      history.pushState({}, '', '/promo?msclkid=new');
      expect(storedClickIds(page)).toEqual({ msclkid: 'new' });
      expect(JSON.parse(decodeURIComponent(page.jar.get(CLICK_COOKIE)!.value)).utm).toEqual({});
    } finally {
      vi.useRealTimers();
    }
  });

  test('a navigation without click parameters leaves the stored touch alone', async () => {
    const page = preparePage('https://www.example.com/?gclid=g1', configFor('https://example.com'));
    boot();
    await service()!.ready;
    const before = page.jar.get(CLICK_COOKIE)!.value;
    history.pushState({}, '', '/pricing');
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(page.jar.get(CLICK_COOKIE)!.value).toBe(before);
  });

  test('signals stripped by a router before the config arrives are kept from the first read', async () => {
    const page = preparePage('https://www.example.com/?gclid=first', configFor('https://example.com'));
    boot();
    history.replaceState({}, '', '/');
    await service()!.ready;
    expect(storedClickIds(page)).toEqual({ gclid: 'first' });
  });

  test('an error in the loader never breaks the page pushState', () => {
    preparePage('https://www.example.com/', 404, null);
    watchNavigation(() => {
      throw new Error('loader bug');
    });
    expect(() => history.pushState({}, '', '/x')).not.toThrow();
    expect(location.pathname).toBe('/x');
  });
});
