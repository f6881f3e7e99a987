// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { sendBeacon } from '../../src/loader/beacon';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const body = () => '{"a":1}';

describe('sending a snapshot', () => {
  test('uses navigator.sendBeacon with the body, and no fetch when the beacon is queued', () => {
    const beacon = vi.spyOn(navigator, 'sendBeacon').mockReturnValue(true);
    const fetch = vi.fn();
    vi.stubGlobal('fetch', fetch);
    const sent = body();
    sendBeacon('https://cnv.test/s', sent);
    expect(beacon).toHaveBeenCalledWith('https://cnv.test/s', sent);
    expect(fetch).not.toHaveBeenCalled();
  });

  test('falls back to fetch with keepalive when the beacon is refused', () => {
    vi.spyOn(navigator, 'sendBeacon').mockReturnValue(false);
    const fetch = vi.fn(async () => ({ ok: true }));
    vi.stubGlobal('fetch', fetch);
    const sent = body();
    sendBeacon('https://cnv.test/s', sent);
    expect(fetch).toHaveBeenCalledWith('https://cnv.test/s', { method: 'POST', body: sent, keepalive: true });
  });

  test('sends by fetch when the browser has no sendBeacon (Firefox with beacon.enabled off) or it throws', () => {
    const fetch = vi.fn(async () => ({ ok: true }));
    vi.stubGlobal('fetch', fetch);
    vi.stubGlobal('navigator', { userAgent: 'no beacon' });
    sendBeacon('https://cnv.test/s', body());
    vi.unstubAllGlobals();
    vi.stubGlobal('fetch', fetch);
    vi.spyOn(navigator, 'sendBeacon').mockImplementation(() => {
      throw new TypeError('Illegal invocation');
    });
    sendBeacon('https://cnv.test/s', body());
    expect(fetch.mock.calls).toEqual([
      ['https://cnv.test/s', { method: 'POST', body: body(), keepalive: true }],
      ['https://cnv.test/s', { method: 'POST', body: body(), keepalive: true }],
    ]);
  });

  test('never throws or leaves a rejected promise, whatever fails', async () => {
    vi.spyOn(navigator, 'sendBeacon').mockReturnValue(false);
    const rejected = vi.fn(() => Promise.reject(new TypeError('Failed to fetch')));
    vi.stubGlobal('fetch', rejected);
    expect(() => sendBeacon('https://cnv.test/s', body())).not.toThrow();
    await Promise.resolve();
    vi.spyOn(navigator, 'sendBeacon').mockImplementation(() => {
      throw new TypeError('Illegal invocation');
    });
    expect(() => sendBeacon('https://cnv.test/s', body())).not.toThrow();
  });
});
