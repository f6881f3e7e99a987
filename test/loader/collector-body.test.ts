// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { collectorBody, withPageContext, type PageContext } from '../../src/loader/collector-body';
import { SNAPSHOT_CONTENT_TYPE, SNAPSHOT_MAX_BYTES, type Snapshot, type SnapshotTrigger, type Touch } from '../../src/protocol/collector';
import { PLATFORM_COOKIES } from '../../src/protocol/signals';
import { installCookieJar, type CookieJar } from './cookie-jar';
import { resetPage, setUrl } from './harness';

let jar: CookieJar | undefined;
afterEach(() => {
  jar?.restore();
  resetPage();
});

const TOKEN = 'AAAAAAAAAAAAAAAAAAAAAA';
const touch: Touch = {
  click_ids: { gclid: 'g1' },
  utm: { utm_source: 'google' },
  landing_page_url: 'https://www.example.com/?gclid=g1&utm_source=google',
  referrer: 'https://www.google.com/',
  captured_at: '2026-11-20T10:00:00.000Z',
};
/** A snapshot as the loader posts it: the token and trigger, with the page's context. */
const buildSnapshot = (token: string, trigger: SnapshotTrigger, t: Touch | null): Snapshot & PageContext =>
  withPageContext({ correlation_token: token, trigger }, t);
const snapshotBody = collectorBody;
const read = (body: string | null): { snapshot: Snapshot & PageContext; bytes: number } => ({
  snapshot: JSON.parse(body!),
  bytes: new TextEncoder().encode(body!).length,
});

describe('a collector post (snapshot or form submission)', () => {
  test('has the protocol shape', () => {
    setUrl('https://www.example.com/signup?plan=pro');
    jar = installCookieJar();
    document.cookie = '_fbc=fb.1.2.abc';
    const snapshot = buildSnapshot(TOKEN, 'form_submit', touch);
    expect(snapshot).toEqual({
      correlation_token: TOKEN,
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      trigger: 'form_submit',
      page_url: 'https://www.example.com/signup?plan=pro',
      referrer: null,
      touch,
      cookies: { _fbc: 'fb.1.2.abc' },
      consent: { ad_user_data: null, ad_personalization: null },
    });
  });

  test("carries Consent Mode's ad_user_data and ad_personalization as the page's dataLayer last set them", () => {
    setUrl('https://www.example.com/');
    (window as { dataLayer?: unknown[] }).dataLayer = [
      ['consent', 'default', { ad_user_data: 'denied', ad_personalization: 'denied' }],
      ['consent', 'update', { ad_user_data: 'granted', ad_personalization: 'sometimes' }],
    ];
    try {
      expect(buildSnapshot(TOKEN, 'api', null).consent).toEqual({ ad_user_data: 'granted', ad_personalization: null });
    } finally {
      delete (window as { dataLayer?: unknown[] }).dataLayer;
    }
  });

  test('is JSON in a string body, which sendBeacon and fetch send as text/plain;charset=UTF-8', () => {
    setUrl('https://www.example.com/');
    const body = snapshotBody(buildSnapshot(TOKEN, 'api', null))!;
    expect(typeof body).toBe('string');
    expect(new Request('https://cnv.test/', { method: 'POST', body }).headers.get('content-type')).toBe(SNAPSHOT_CONTENT_TYPE);
    expect(read(body).snapshot.touch).toBeNull();
  });

  test('a snapshot within 16 KB is sent whole', () => {
    setUrl(`https://www.example.com/signup?x=${'a'.repeat(8000)}`);
    const snapshot = buildSnapshot(TOKEN, 'api', touch);
    const { snapshot: sent } = read(snapshotBody(structuredClone(snapshot)));
    expect(sent).toEqual(snapshot);
  });

  test('over 16 KB it first drops the referrer', () => {
    setUrl(`https://www.example.com/signup?x=${'a'.repeat(9000)}`);
    Object.defineProperty(document, 'referrer', { value: `https://ref.test/?${'r'.repeat(9000)}`, configurable: true });
    const snapshot = buildSnapshot(TOKEN, 'form_submit', touch);
    delete (document as unknown as Record<string, unknown>).referrer;
    const { snapshot: sent, bytes } = read(snapshotBody(structuredClone(snapshot)));
    expect(bytes).toBeLessThanOrEqual(SNAPSHOT_MAX_BYTES);
    expect(sent).toEqual({ ...snapshot, referrer: null });
  });

  test('then the page URL query, then the platform cookies; the touch stays and it is never over 16 KB', () => {
    setUrl(`https://www.example.com/signup?x=${'a'.repeat(9000)}`);
    jar = installCookieJar();
    for (const name of PLATFORM_COOKIES) document.cookie = `${name}=${'€'.repeat(500)}`;
    const bigTouch = { ...touch, utm: { utm_content: 'c'.repeat(500), utm_term: 't'.repeat(500), utm_campaign: 'p'.repeat(500) } };
    const snapshot = buildSnapshot(TOKEN, 'form_submit', bigTouch);
    expect(Object.keys(snapshot.cookies)).toHaveLength(PLATFORM_COOKIES.length);
    const { snapshot: sent, bytes } = read(snapshotBody(snapshot));
    expect(bytes).toBeLessThanOrEqual(SNAPSHOT_MAX_BYTES);
    expect(sent.cookies).toEqual({});
    expect(sent).toMatchObject({ referrer: null, page_url: 'https://www.example.com/signup', touch: bigTouch });
  });

  test('platform cookies are kept when dropping the page URL query is enough', () => {
    setUrl(`https://www.example.com/signup?x=${'a'.repeat(17000)}`);
    jar = installCookieJar();
    document.cookie = '_fbp=fb.1.1.1';
    const { snapshot, bytes } = read(snapshotBody(buildSnapshot(TOKEN, 'api', touch)));
    expect(bytes).toBeLessThanOrEqual(SNAPSHOT_MAX_BYTES);
    expect(snapshot.cookies).toEqual({ _fbp: 'fb.1.1.1' });
    expect(snapshot.page_url).toBe('https://www.example.com/signup');
  });

  test('a form submission gets the same page context and the same size limit', () => {
    setUrl(`https://www.example.com/contact?x=${'a'.repeat(17000)}`);
    const body = { submission_id: TOKEN, integration: 'html', form_id: 'callback', consent: { ad_user_data: null, ad_personalization: null }, fields: { email: 'ada@example.com' } };
    const sent = JSON.parse(collectorBody(withPageContext(body, touch))!);
    expect(sent).toMatchObject({ ...body, touch, referrer: null, page_url: 'https://www.example.com/contact', cookies: {} });
    expect(sent.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});
