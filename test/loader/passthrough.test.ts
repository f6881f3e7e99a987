/** URL passthrough (src/loader/passthrough.ts): the landing's click ids and UTM parameters added to a followed URL. */
import { afterEach, describe, expect, test } from 'vitest';
import type { Touch } from '../../src/protocol/collector';
import { passThrough } from '../../src/loader/passthrough';

const touch: Touch = {
  click_ids: { gclid: 'G1' },
  utm: { utm_source: 'google', utm_medium: 'cpc' },
  landing_page_url: 'https://www.example.com/?gclid=G1&utm_source=google&utm_medium=cpc',
  referrer: null,
  captured_at: '2026-11-21T09:30:00.000Z',
};

describe('passing the landing click through to a followed URL', () => {
  afterEach(() => {
    delete (Object.prototype as Record<string, unknown>).legacyHelper;
  });

  test('adds the click ids and UTM parameters the URL lacks, leaving its own alone', () => {
    const url = new URL('https://app.example.com/pricing?utm_source=site');
    passThrough(url, touch);
    expect(Object.fromEntries(url.searchParams)).toEqual({ utm_source: 'site', gclid: 'G1', utm_medium: 'cpc' });
  });

  test('a page that added an enumerable property to Object.prototype (a legacy library) puts nothing of it on the URL', () => {
    // eslint-disable-next-line no-extend-native
    (Object.prototype as Record<string, unknown>).legacyHelper = 'polluted';
    const url = new URL('https://app.example.com/pricing');
    passThrough(url, touch);
    expect(Object.fromEntries(url.searchParams)).toEqual({ gclid: 'G1', utm_source: 'google', utm_medium: 'cpc' });
  });
});
