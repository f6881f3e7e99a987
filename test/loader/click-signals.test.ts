// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { readTouch, TOUCH_MAX, withoutQuery } from '../../src/loader/click-signals';
import { CLICK_ID_KEYS, SIGNAL_VALUE_MAX, UTM_KEYS } from '../../src/protocol/signals';
import { resetPage, setUrl } from './harness';

afterEach(resetPage);

const touchAt = (url: string) => {
  setUrl(url);
  return readTouch(location.href);
};

describe('click signals of the page URL', () => {
  test('a URL without click ids or UTM parameters is no touch', () => {
    expect(touchAt('https://www.example.com/pricing?plan=pro&ref=blog')).toBeNull();
  });

  test('keys match case-insensitively and are stored lower-case (ScCid is sccid)', () => {
    const touch = touchAt('https://www.example.com/?GCLID=g1&ScCid=s1&UTM_Source=Google&Fbclid=f1')!;
    expect(touch.click_ids).toEqual({ gclid: 'g1', sccid: 's1', fbclid: 'f1' });
    expect(touch.utm).toEqual({ utm_source: 'Google' });
  });

  test('every listed click id and UTM key is read', () => {
    const query = [...CLICK_ID_KEYS, ...UTM_KEYS].map((key) => `${key}=v_${key}`).join('&');
    const touch = touchAt(`https://www.example.com/?${query}`)!;
    expect(Object.keys(touch.click_ids)).toEqual([...CLICK_ID_KEYS]);
    expect(Object.keys(touch.utm)).toEqual([...UTM_KEYS]);
  });

  test('values are kept verbatim but trimmed, and capped at 500 characters', () => {
    const long = 'x'.repeat(SIGNAL_VALUE_MAX + 50);
    const touch = touchAt(`https://www.example.com/?gclid=%20Ab%2FC%3D%20&utm_term=${long}`)!;
    expect(touch.click_ids.gclid).toBe('Ab/C=');
    expect(touch.utm.utm_term).toHaveLength(SIGNAL_VALUE_MAX);
  });

  test('the cap never splits a surrogate pair: an emoji the cap would cut in half goes whole', () => {
    // 499 characters, then an emoji (two UTF-16 code units) across the 500th: the value keeps 499.
    const value = `${'x'.repeat(SIGNAL_VALUE_MAX - 1)}\u{1F600}tail`;
    const touch = touchAt(`https://www.example.com/?utm_content=${encodeURIComponent(value)}&gclid=${encodeURIComponent(`${'g'.repeat(SIGNAL_VALUE_MAX - 2)}\u{1F600}`)}`)!;
    expect(touch.utm.utm_content).toBe('x'.repeat(SIGNAL_VALUE_MAX - 1));
    expect(touch.click_ids.gclid, 'a pair that fits is kept').toBe(`${'g'.repeat(SIGNAL_VALUE_MAX - 2)}\u{1F600}`);
    expect(touch.utm.utm_content).not.toMatch(/[\ud800-\udfff]/);
  });

  test('empty values are skipped and the first of a repeated key wins', () => {
    const touch = touchAt('https://www.example.com/?gclid=&gclid=first&GCLID=second&utm_medium=%20')!;
    expect(touch.click_ids).toEqual({ gclid: 'first' });
    expect(touch.utm).toEqual({});
    expect(touchAt('https://www.example.com/?gclid=&utm_source=')).toBeNull();
  });

  test('a touch records the landing URL without its query or fragment, the referrer and when it was captured', () => {
    const touch = touchAt('https://www.example.com/landing?msclkid=m1')!;
    expect(touch.landing_page_url).toBe('https://www.example.com/landing');
    expect(touch.referrer).toBeNull();
    expect(new Date(touch.captured_at).toISOString()).toBe(touch.captured_at);
  });

  test('a touch too big for a cookie first drops its referrer', () => {
    Object.defineProperty(document, 'referrer', { value: `https://ref.test/?q=${'r'.repeat(3800)}`, configurable: true });
    const touch = touchAt('https://www.example.com/landing?gclid=g&utm_source=s')!;
    delete (document as unknown as Record<string, unknown>).referrer;
    expect(touch.referrer).toBeNull();
    expect(touch.click_ids).toEqual({ gclid: 'g' });
    expect(touch.utm).toEqual({ utm_source: 's' });
  });

  test('keeps in its cookie none of the query a mail campaign or a sign-in leaves on the landing (an email, a token)', () => {
    const touch = touchAt('https://www.example.com/welcome?gclid=g&email=ada%40example.com&utm_source=newsletter&token=secret#access_token=t')!;
    expect(touch).toMatchObject({ click_ids: { gclid: 'g' }, utm: { utm_source: 'newsletter' }, landing_page_url: 'https://www.example.com/welcome' });
    expect(JSON.stringify(touch)).not.toMatch(/ada|secret|access_token/);
  });

  test('then the UTM set goes, click ids stay', () => {
    const long = touchAt(`https://www.example.com/landing?gclid=g&utm_source=s&extra=${'z'.repeat(3800)}`)!;
    expect(long.landing_page_url).toBe('https://www.example.com/landing');
    expect(long.utm).toEqual({ utm_source: 's' });
    const quoted = '%22'.repeat(SIGNAL_VALUE_MAX);
    const huge = touchAt(`https://www.example.com/landing?gclid=g&${UTM_KEYS.map((key) => `${key}=${quoted}`).join('&')}`)!;
    expect(huge.utm).toEqual({});
    expect(huge.click_ids).toEqual({ gclid: 'g' });
    for (const touch of [long, huge]) expect(encodeURIComponent(JSON.stringify(touch)).length).toBeLessThanOrEqual(TOUCH_MAX);
  });

  test('a touch whose click ids alone overflow a cookie is dropped', () => {
    const query = CLICK_ID_KEYS.map((key) => `${key}=${'%22'.repeat(SIGNAL_VALUE_MAX)}`).join('&');
    expect(touchAt(`https://www.example.com/?${query}`)).toBeNull();
  });

  test('withoutQuery keeps scheme, host and path only', () => {
    expect(withoutQuery('https://www.example.com/a/b?x=1#top')).toBe('https://www.example.com/a/b');
    expect(withoutQuery('https://www.example.com/a#top?x')).toBe('https://www.example.com/a');
  });
});
