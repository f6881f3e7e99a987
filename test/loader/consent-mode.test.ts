// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { consentAnswer, consentSignals, followConsentMode } from '../../src/loader/consent-mode';

/** Whether the commands deny ad_storage, as the loader decides it. */
const adStorageDenied = (entries: unknown[]) => consentAnswer(entries, 'ad_storage')[0] === 'denied';

afterEach(() => {
  delete (window as unknown as Record<string, unknown>).dataLayer;
});

function args(..._values: unknown[]): IArguments {
  // eslint-disable-next-line prefer-rest-params
  return arguments;
}

describe('ad_storage from dataLayer consent commands', () => {
  test('no consent command: not denied', () => {
    expect(adStorageDenied([{ event: 'gtm.js' }, ['config', 'G-1'], null, 'x'])).toBe(false);
  });

  test('default denied, then update granted', () => {
    expect(adStorageDenied([['consent', 'default', { ad_storage: 'denied' }]])).toBe(true);
    expect(
      adStorageDenied([
        ['consent', 'default', { ad_storage: 'denied' }],
        ['consent', 'update', { ad_storage: 'granted' }],
      ]),
    ).toBe(false);
  });

  test('the last update decides', () => {
    expect(
      adStorageDenied([
        ['consent', 'update', { ad_storage: 'granted' }],
        ['consent', 'update', { ad_storage: 'denied' }],
      ]),
    ).toBe(true);
  });

  test('gtag Arguments objects are read like arrays', () => {
    expect(adStorageDenied([args('consent', 'default', { ad_storage: 'denied' })])).toBe(true);
    expect(adStorageDenied([args('consent', 'default', { ad_storage: 'denied' }), args('consent', 'update', { ad_storage: 'granted' })])).toBe(false);
  });

  test('a region-scoped default of denied counts even when a global default grants (the region is unknown)', () => {
    expect(
      adStorageDenied([
        ['consent', 'default', { ad_storage: 'denied', region: ['DE', 'FR'] }],
        ['consent', 'default', { ad_storage: 'granted' }],
      ]),
    ).toBe(true);
  });

  test('commands that do not mention ad_storage change nothing', () => {
    expect(
      adStorageDenied([
        ['consent', 'default', { ad_storage: 'denied' }],
        ['consent', 'update', { analytics_storage: 'granted' }],
      ]),
    ).toBe(true);
  });
});

describe('following window.dataLayer', () => {
  test('reports existing entries, then every push, and keeps push working', () => {
    const layer: unknown[] = [['consent', 'default', { ad_storage: 'denied' }]];
    (window as unknown as { dataLayer: unknown[] }).dataLayer = layer;
    const onChange = vi.fn();
    followConsentMode(onChange)();
    expect(onChange).toHaveBeenLastCalledWith(true, false);
    expect(layer.push(['consent', 'update', { ad_storage: 'granted' }])).toBe(2);
    expect(onChange).toHaveBeenLastCalledWith(false, false);
    layer.push(['consent', 'update', { ad_storage: 'denied' }]);
    expect(onChange, "the visitor's own denial is told apart from the page's default").toHaveBeenLastCalledWith(true, true);
    expect(layer).toHaveLength(3);
  });

  test('without a dataLayer nothing is reported and none is created; a later one is picked up', () => {
    const onChange = vi.fn();
    const follow = followConsentMode(onChange);
    follow();
    expect(onChange).not.toHaveBeenCalled();
    expect('dataLayer' in window).toBe(false);
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [['consent', 'default', { ad_storage: 'denied' }]];
    follow();
    expect(onChange).toHaveBeenCalledWith(true, false);
  });

  test('following again does not wrap push twice', () => {
    const layer: unknown[] = [];
    (window as unknown as { dataLayer: unknown[] }).dataLayer = layer;
    const onChange = vi.fn();
    const follow = followConsentMode(onChange);
    follow();
    follow();
    onChange.mockClear();
    layer.push({ event: 'x' });
    expect(onChange).toHaveBeenCalledTimes(1);
  });

  test('an error in the loader does not break the page push', () => {
    const layer: unknown[] = [];
    (window as unknown as { dataLayer: unknown[] }).dataLayer = layer;
    followConsentMode(() => {
      throw new Error('loader bug');
    })();
    expect(() => layer.push(['consent', 'update', { ad_storage: 'granted' }])).not.toThrow();
    expect(layer).toHaveLength(1);
  });
});
