import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkTikTokAction } from '../../../../src/server/destinations/tiktok/action-config';
import { parseTikTokConnectForm } from '../../../../src/server/destinations/tiktok/connect';
import { hashIdentityForTikTok, normalizeEmail, normalizePhone } from '../../../../src/server/destinations/tiktok/identity';
import { buildTikTokEvent, buildTrackBody } from '../../../../src/server/destinations/tiktok/request';
import { classifyTikTokAnswer } from '../../../../src/server/destinations/tiktok/response';
import { tiktokInput } from './fixtures';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const answer = (json: unknown, status = 200, headers: Record<string, string> = {}) =>
  ({ answered: true, status, headers: new Headers(headers), text: JSON.stringify(json) }) as const;

describe('TikTok identity rules', () => {
  it('lower-cases and trims an email, and writes a phone in E.164 before SHA-256', () => {
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com');
    expect(normalizeEmail('not-an-address')).toBeNull();
    expect(normalizePhone('+49 (30) 987-6543')).toBe('+49309876543');
    expect(normalizePhone('0049 30 9876543')).toBe('+49309876543');
    expect(normalizePhone('(030) 9876543')).toBeNull(); // no country: never hashed with a guess
    const hashed = hashIdentityForTikTok({ email: 'Ada@Example.com', phone: '+1 555 444 1234' });
    expect(hashed).toEqual({ email: sha('ada@example.com'), phone: sha('+15554441234'), external_id: null, skipped: [] });
  });

  it('trims and lower-cases the customer id before SHA-256, as TikTok’s own formatter does for external_id', () => {
    expect(hashIdentityForTikTok({}, ' Acct_42 ').external_id).toBe(sha('acct_42'));
    expect(hashIdentityForTikTok({}, '  ').external_id).toBeNull();
  });

  it('skips a field it cannot normalise with a note that never holds the value', () => {
    const hashed = hashIdentityForTikTok({ email: 'ada-at-example', phone: '030 9876543' });
    expect(hashed.email).toBeNull();
    expect(hashed.phone).toBeNull();
    expect(hashed.skipped.join(' ')).not.toContain('ada-at-example');
    expect(hashed.skipped).toHaveLength(2);
  });
});

describe('a cnv conversion as a TikTok web event', () => {
  it('builds the documented shape: event, Unix seconds, event_id from customer_event_id, ttclid, ttp, hashes, IP, UA, page', () => {
    const built = buildTikTokEvent(tiktokInput(), 'C4CNVDEMO0PIXEL0CODE');
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.event).toEqual({
      event: 'CompleteRegistration',
      event_time: Date.parse('2026-11-21T09:30:00.000Z') / 1000,
      event_id: 'user_42',
      user: {
        ttclid: 'E.C.P.CqgBmvzXbC1kKPt8L0',
        ttp: '2F7h37YkS1j57AYSKTI7IHhJPYH',
        email: sha('ada@example.com'),
        phone: sha('+49309876543'),
        ip: '203.0.113.7',
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
      },
      page: { url: 'https://app.example.com/signup' },
    });
    expect(JSON.stringify(built.summary)).not.toMatch(/203\.0\.113|Mozilla|Ada|E\.C\.P/);
    expect(buildTrackBody('C4CNVDEMO0PIXEL0CODE', [built.event])).toEqual({ event_source: 'web', event_source_id: 'C4CNVDEMO0PIXEL0CODE', data: [built.event] });
  });

  it('sends page.url without an email address or contact-detail parameter in it, and without its fragment', () => {
    const built = buildTikTokEvent(tiktokInput({ pageUrl: 'https://app.example.com/signup?mail=ada%40example.com&ttclid=E.C.P.x&plan=pro#done' }), 'C4CNVDEMO0PIXEL0CODE');
    expect(built.ok && built.event.page).toEqual({ url: 'https://app.example.com/signup?ttclid=E.C.P.x&plan=pro' });
  });

  it('sends Lead for a form (TikTok renamed SubmitForm to Lead), the configured event otherwise, and cnv’s event id without a customer_event_id', () => {
    const form = buildTikTokEvent(tiktokInput({ trigger: 'form_submission' }), 'P');
    const named = buildTikTokEvent(tiktokInput({ actionConfig: { event_name: 'SubmitForm' }, customerEventId: null }), 'P');
    expect(form.ok && form.event.event).toBe('Lead');
    // The legacy name stays a valid choice for a pixel that still fires it.
    expect(checkTikTokAction({ event_name: 'SubmitForm' }, 'c', 'form_submission')).toEqual([]);
    expect(named.ok && [named.event.event, named.event.event_id]).toEqual(['SubmitForm', 'evt_01']);
  });

  it('sends nothing about a visitor who denied ad_user_data, click id included', () => {
    const built = buildTikTokEvent(tiktokInput({ consent: { ad_user_data: 'denied', ad_personalization: null } }), 'P');
    expect(built).toMatchObject({ ok: false, skipped: true, error: { code: 'consent_denied' } });
    const withId = buildTikTokEvent(tiktokInput({ customerId: 'acct_7', consent: { ad_user_data: 'denied', ad_personalization: null } }), 'P');
    expect(JSON.stringify(withId)).not.toContain(sha('acct_7'));
  });

  it('sends value and currency as properties (TikTok’s sample: value a number, currency ISO 4217) and the customer id as external_id', () => {
    const built = buildTikTokEvent(tiktokInput({ value: 49.9, currency: 'EUR', customerId: 'acct_7' }), 'P');
    expect(built.ok && built.event).toMatchObject({ event: 'CompleteRegistration', properties: { value: 49.9, currency: 'EUR' }, user: { external_id: sha('acct_7') } });
    expect(built.ok && built.summary).toMatchObject({ properties: { value: 49.9, currency: 'EUR' }, user: { external_id: sha('acct_7') } });
  });

  it('makes a later stage Purchase (TikTok renamed CompletePayment) when it has a value above 0, else Lead (a free trial too); one with only a customer id still matches', () => {
    const paid = buildTikTokEvent(tiktokInput({ trigger: 'conversion', value: 120, currency: 'USD' }), 'P');
    expect(paid.ok && [paid.event.event, paid.event.properties]).toEqual(['Purchase', { value: 120, currency: 'USD' }]);
    const trial = buildTikTokEvent(tiktokInput({ trigger: 'conversion', value: 0, currency: 'USD' }), 'P');
    expect(trial.ok && trial.event.event).toBe('Lead');
    const only = buildTikTokEvent(
      tiktokInput({ trigger: 'conversion', clickIds: {}, cookies: {}, identity: {}, userAgent: null, ipAddress: null, pageUrl: null, customerId: 'acct_7' }),
      'P',
    );
    expect(only.ok && only.event).toEqual({ event: 'Lead', event_time: Date.parse('2026-11-21T09:30:00.000Z') / 1000, event_id: 'user_42', user: { external_id: sha('acct_7') } });
  });


  it('refuses an event with nothing to match on, and leaves out an IP that is not one', () => {
    const none = buildTikTokEvent(tiktokInput({ clickIds: {}, cookies: {}, identity: {}, userAgent: null }), 'P');
    expect(none).toMatchObject({ ok: false, error: { code: 'no_identifiers' } });
    const badIp = buildTikTokEvent(tiktokInput({ ipAddress: 'unknown' }), 'P');
    expect(badIp.ok && badIp.event.user.ip).toBeUndefined();
  });
});

describe('TikTok action config and connect form', () => {
  it('takes TikTok’s standard names and custom names, and points out a standard name in the wrong case', () => {
    expect(checkTikTokAction({}, 'c', 'saas_signup')).toEqual([]);
    expect(checkTikTokAction({ event_name: 'CompletePayment' }, 'c', 'saas_signup')).toEqual([]);
    expect(checkTikTokAction({ event_name: 'TrialStarted' }, 'c', 'saas_signup')).toEqual([]);
    expect(checkTikTokAction({ event_name: 'lead' }, 'c', 'saas_signup')[0]?.message).toContain("'Lead'");
    expect(checkTikTokAction({ event_name: 5, other: 1 }, 'c', 'saas_signup').map((p) => p.param)).toEqual(['c.other', 'c.event_name']);
  });

  it('keeps the pixel code and test code as settings and the token as a credential', () => {
    const ok = parseTikTokConnectForm({ pixel_code: ' c4cnvdemo0pixel0code ', access_token: 'a'.repeat(40), test_event_code: 'TEST123' });
    expect(ok).toEqual({
      ok: true,
      settings: { pixel_code: 'C4CNVDEMO0PIXEL0CODE', test_event_code: 'TEST123' },
      credentials: { access_token: 'a'.repeat(40) },
      summary: 'TikTok pixel C4CNVDEMO0PIXEL0CODE',
    });
    const bad = parseTikTokConnectForm({ pixel_code: 'pixel code!', access_token: 'short' });
    expect(bad.ok === false && bad.errors.map((e) => e.param)).toEqual(['pixel_code', 'access_token']);
  });
});

describe('TikTok answers', () => {
  it('reads code 0 as delivered, 40100 as rate limited (honouring Retry-After), 5xx as a retry', () => {
    expect(classifyTikTokAnswer(answer({ code: 0, message: 'OK', request_id: 'r1' }), 0)).toEqual({ kind: 'delivered', platformRequestId: 'r1' });
    expect(classifyTikTokAnswer(answer({ code: 40100, message: 'Too many requests' }), 0)).toMatchObject({ kind: 'retry', error: { code: 'rate_limited' } });
    expect(classifyTikTokAnswer(answer({ code: 40100, message: 'x' }, 200, { 'retry-after': '30' }), 0)).toMatchObject({ kind: 'retry', afterMs: 30_000 });
    expect(classifyTikTokAnswer(answer('Too Many Requests', 429), 0)).toMatchObject({ kind: 'retry', error: { code: 'rate_limited' } });
    expect(classifyTikTokAnswer(answer({ code: 50000, message: 'internal' }, 500), 0)).toMatchObject({ kind: 'retry', error: { code: 'platform_unavailable' } });
  });

  it('hands a refused token to delivery, fails a refused pixel with a plain hint, and marks invalid parameters for isolation', () => {
    const token = classifyTikTokAnswer(answer({ code: 40105, message: 'The access token is invalid' }), 0);
    expect(token).toMatchObject({ kind: 'token_refused', error: { code: 'invalid_token', hint: expect.stringContaining('Generate a new access token') } });
    expect(classifyTikTokAnswer(answer({ code: 40001, message: 'No permission' }), 0)).toMatchObject({ kind: 'failed', error: { code: 'permission_denied' } });
    expect(classifyTikTokAnswer(answer({ code: 40002, message: 'Invalid parameters' }), 0)).toMatchObject({ kind: 'invalid_event', error: { code: 'invalid_parameter' } });
  });

  it('never repeats a long opaque run (a token, a hash) from TikTok’s message', () => {
    const verdict = classifyTikTokAnswer(answer({ code: 40105, message: `bad token ${'f'.repeat(40)}` }), 0);
    expect(verdict.kind !== 'delivered' && verdict.error.message).not.toContain('f'.repeat(40));
  });
});
