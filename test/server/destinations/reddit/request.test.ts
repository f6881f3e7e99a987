import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkRedditAction, redditEventType } from '../../../../src/server/destinations/reddit/action-config';
import { parseRedditConnectForm } from '../../../../src/server/destinations/reddit/connect';
import { canonicalizeEmail, canonicalizePhone, hashIdentityForReddit } from '../../../../src/server/destinations/reddit/identity';
import { buildRedditBody, buildRedditEvent, conversionEventsUrl } from '../../../../src/server/destinations/reddit/request';
import { classifyRedditAnswer } from '../../../../src/server/destinations/reddit/response';
import { NOW, redditInput } from './fixtures';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const answer = (status: number, json: unknown, headers: Record<string, string> = {}) =>
  ({ answered: true, status, headers: new Headers(headers), text: JSON.stringify(json) }) as const;

describe('Reddit match keys, against the examples of Reddit’s documents', () => {
  it('canonicalises Al.ice$+Apple@Example.Com to alice@example.com, hashing to ff8d9819… (Reddit\'s own example)', () => {
    expect(canonicalizeEmail('Al.ice$+Apple@Example.Com')).toBe('alice@example.com');
    expect(hashIdentityForReddit({ email: 'Al.ice$+Apple@Example.Com' }).email).toBe('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976');
    expect(hashIdentityForReddit({ email: 'Al.ice+Apple@Example.Com' }).email).toBe('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976');
    // Reddit removes every character of the local part that is not a letter or digit, not only dots.
    expect(canonicalizeEmail('John_Doe-Jr@Example.com')).toBe('johndoejr@example.com');
    expect(canonicalizeEmail("o'brien.x@example.com")).toBe('obrienx@example.com');
    expect(hashIdentityForReddit({ email: 'alice@example.com' }).email).toBe('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976');
  });

  it('hashes +15554441234 to e5b124c5…, with the extension and punctuation removed first', () => {
    expect(canonicalizePhone('+1 (555) 444-1234 ext. 12')).toBe('+15554441234');
    expect(hashIdentityForReddit({ phone: '+15554441234' }).phone_number).toBe('e5b124c58580eb16bd959b8d0cac12b12c952e2ceae0203d416cff94f10b994a');
    expect(canonicalizePhone('555-444-1234')).toBeNull(); // no country code: never hashed with a guess
  });

  it('hashes the customer id as external_id: customer12345 to a4cc2fc5…, trimmed, case kept', () => {
    expect(hashIdentityForReddit({}, 'customer12345').external_id).toBe('a4cc2fc5adf58a029291c1514d273989113a1d05e1d753c1d0c3a848af7109cc');
    expect(hashIdentityForReddit({}, '  customer12345 ').external_id).toBe('a4cc2fc5adf58a029291c1514d273989113a1d05e1d753c1d0c3a848af7109cc');
    expect(hashIdentityForReddit({}, 'Customer12345').external_id).not.toBe('a4cc2fc5adf58a029291c1514d273989113a1d05e1d753c1d0c3a848af7109cc');
    expect(hashIdentityForReddit({}, '   ').external_id).toBeNull();
    expect(hashIdentityForReddit({}).external_id).toBeNull();
  });

  it('refuses what is not an address, with a note that never holds the value', () => {
    expect(canonicalizeEmail('+@example.com')).toBeNull();
    expect(canonicalizeEmail('alice@localhost')).toBeNull();
    const hashed = hashIdentityForReddit({ email: 'alice-at-example' });
    expect(hashed.email).toBeNull();
    expect(hashed.skipped.join(' ')).not.toContain('alice-at-example');
  });
});

describe('a cnv conversion as a Reddit v3 conversion event', () => {
  it('builds the documented event: epoch ms, WEBSITE, SIGN_UP, click id, source URL, match keys, conversion_id', () => {
    const built = buildRedditEvent(redditInput(), 'a2_cnvdemopixel', NOW);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.event).toEqual({
      event_at: Date.parse('2026-11-21T09:30:00.000Z'),
      action_source: 'WEBSITE',
      type: { tracking_type: 'SIGN_UP' },
      click_id: '3184742045291813272',
      event_source_url: 'https://app.example.com/signup',
      user: {
        email: 'ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976',
        phone_number: 'e5b124c58580eb16bd959b8d0cac12b12c952e2ceae0203d416cff94f10b994a',
        ip_address: sha('203.0.113.7'),
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
        uuid: '1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132',
      },
      metadata: { conversion_id: 'user_42' },
    });
    expect(buildRedditBody([built.event])).toEqual({ data: { events: [built.event] } });
    expect(buildRedditBody([built.event], 't2_test')).toEqual({ data: { test_id: 't2_test', events: [built.event] } });
    expect(conversionEventsUrl('https://ads-api.reddit.com', 'a2_x')).toBe('https://ads-api.reddit.com/api/v3/pixels/a2_x/conversion_events');
    expect(JSON.stringify(built.summary)).not.toMatch(/203\.0\.113|Mozilla|Alice|3184742045291813272/i);
  });

  it('sends LEAD for a form, a tracking type or a custom event as the action chooses', () => {
    expect(redditEventType({}, 'form_submission')).toEqual({ tracking_type: 'LEAD' });
    expect(redditEventType({ event_name: 'PURCHASE' }, 'saas_signup')).toEqual({ tracking_type: 'PURCHASE' });
    expect(redditEventType({ event_name: 'Trial started' }, 'saas_signup')).toEqual({ tracking_type: 'CUSTOM', custom_event_name: 'Trial started' });
  });

  it('sends event_source_url without an email address or contact-detail parameter in it, and without its fragment', () => {
    const built = buildRedditEvent(redditInput({ pageUrl: 'https://app.example.com/signup?e=ada%40example.com&tel=%2B4930123456&rdt_cid=abc#x' }), 'a2_x', NOW);
    expect(built.ok && built.event.event_source_url).toBe('https://app.example.com/signup?rdt_cid=abc');
  });

  it('calls a report with no browser behind it OTHER, and refuses one with nothing to match on', () => {
    const other = buildRedditEvent(redditInput({ clickIds: {}, cookies: {}, pageUrl: null, userAgent: null, ipAddress: null }), 'a2_x', NOW);
    expect(other.ok && other.event.action_source).toBe('OTHER');
    const none = buildRedditEvent(redditInput({ clickIds: {}, cookies: {}, identity: {}, userAgent: null }), 'a2_x', NOW);
    expect(none).toMatchObject({ ok: false, error: { code: 'no_identifiers' } });
  });

  it('refuses a conversion older than 7 days, and shares nothing when ad_user_data was denied', () => {
    const old = buildRedditEvent(redditInput({ occurredAt: new Date(NOW.getTime() - 7 * 86_400_000 - 1) }), 'a2_x', NOW);
    expect(old).toMatchObject({ ok: false, error: { code: 'event_too_old', hint: expect.any(String) } });
    const denied = buildRedditEvent(redditInput({ consent: { ad_user_data: 'denied', ad_personalization: 'denied' } }), 'a2_x', NOW);
    expect(denied).toMatchObject({ ok: false, skipped: true, error: { code: 'consent_denied' } });
  });

  it('sends value and currency in metadata (a double in the currency’s base unit) and the customer id as external_id', () => {
    const signup = buildRedditEvent(redditInput({ value: 49.9, currency: 'EUR', customerId: 'customer12345' }), 'a2_x', NOW);
    expect(signup.ok && signup.event).toMatchObject({
      type: { tracking_type: 'SIGN_UP' },
      metadata: { conversion_id: 'user_42', value: 49.9, currency: 'EUR' },
      user: { external_id: 'a4cc2fc5adf58a029291c1514d273989113a1d05e1d753c1d0c3a848af7109cc' },
    });
    expect(signup.ok && signup.summary).toMatchObject({ value: 49.9, currency: 'EUR', user: { external_id: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(JSON.stringify(signup.ok && signup.summary)).not.toContain('customer12345');
  });

  it('makes a later stage a PURCHASE when it has a value above 0, else a LEAD (a free trial too), and PAGE_VISIT never carries one', () => {
    const paid = buildRedditEvent(redditInput({ trigger: 'conversion', value: 120.5, currency: 'USD' }), 'a2_x', NOW);
    expect(paid.ok && paid.event).toMatchObject({ type: { tracking_type: 'PURCHASE' }, metadata: { value: 120.5, currency: 'USD' } });
    const trial = buildRedditEvent(redditInput({ trigger: 'conversion', value: 0, currency: 'USD' }), 'a2_x', NOW);
    expect(trial.ok && trial.event.type).toEqual({ tracking_type: 'LEAD' });
    const stage = buildRedditEvent(redditInput({ trigger: 'conversion' }), 'a2_x', NOW);
    expect(stage.ok && [stage.event.type, stage.event.metadata]).toEqual([{ tracking_type: 'LEAD' }, { conversion_id: 'user_42' }]);
    const visit = buildRedditEvent(redditInput({ actionConfig: { event_name: 'PAGE_VISIT' }, value: 5, currency: 'USD' }), 'a2_x', NOW);
    expect(visit.ok && visit.event.metadata).toEqual({ conversion_id: 'user_42' });
  });

  it('matches a later stage reported with only a customer id, and sends nothing of it when ad_user_data was denied', () => {
    const bare = { clickIds: {}, cookies: {}, identity: {}, userAgent: null, ipAddress: null, pageUrl: null, trigger: 'conversion' as const };
    const only = buildRedditEvent(redditInput({ ...bare, customerId: 'customer12345' }), 'a2_x', NOW);
    expect(only.ok && only.event).toEqual({
      event_at: Date.parse('2026-11-21T09:30:00.000Z'),
      action_source: 'OTHER',
      type: { tracking_type: 'LEAD' },
      user: { external_id: 'a4cc2fc5adf58a029291c1514d273989113a1d05e1d753c1d0c3a848af7109cc' },
      metadata: { conversion_id: 'user_42' },
    });
    const denied = buildRedditEvent(redditInput({ customerId: 'customer12345', consent: { ad_user_data: 'denied', ad_personalization: null } }), 'a2_x', NOW);
    expect(denied).toMatchObject({ ok: false, skipped: true });
    expect(JSON.stringify(denied)).not.toContain('a4cc2fc5');
  });

});

describe('Reddit action config and connect form', () => {
  it('takes v3 tracking types and custom names, and corrects v2 spellings', () => {
    expect(checkRedditAction({ event_name: 'SIGN_UP' }, 'c', 'saas_signup')).toEqual([]);
    expect(checkRedditAction({ event_name: 'Trial started' }, 'c', 'saas_signup')).toEqual([]);
    expect(checkRedditAction({ event_name: 'SignUp' }, 'c', 'saas_signup')[0]?.message).toContain("'SIGN_UP'");
    expect(checkRedditAction({ event_name: 'x'.repeat(65) }, 'c', 'saas_signup')[0]?.message).toContain('64');
    expect(checkRedditAction({ event_name: 'CUSTOM' }, 'c', 'saas_signup')).toHaveLength(1);
  });

  it('keeps the pixel id and Event Testing id as settings and the token as a credential', () => {
    const ok = parseRedditConnectForm({ pixel_id: 'a2_cnvdemopixel', access_token: 'eyJ' + 'a'.repeat(40), test_id: 't2_abc' });
    expect(ok).toMatchObject({ ok: true, settings: { pixel_id: 'a2_cnvdemopixel', test_id: 't2_abc' }, credentials: { access_token: 'eyJ' + 'a'.repeat(40) } });
    const bad = parseRedditConnectForm({ pixel_id: '12345', access_token: '' });
    expect(bad.ok === false && bad.errors.map((e) => e.param)).toEqual(['pixel_id', 'access_token']);
  });

  it('asks no token after the sign-in with Reddit (its refresh token is the credential), and ignores a pasted one', () => {
    const signedIn = parseRedditConnectForm({ pixel_id: 'a2_cnvdemopixel', access_token: 'stray' }, { signedIn: true });
    expect(signedIn).toEqual({ ok: true, settings: { pixel_id: 'a2_cnvdemopixel' }, credentials: {}, summary: 'Reddit pixel a2_cnvdemopixel, signed in' });
  });
});

describe('Reddit answers', () => {
  it('classifies 200, 429 (with Retry-After), 500, 401, 403 and a refused batch', () => {
    expect(classifyRedditAnswer(answer(200, { data: { message: 'Successfully processed 1 conversion events.' } }), 0)).toEqual({ kind: 'delivered' });
    expect(classifyRedditAnswer(answer(429, { error: { code: 429, message: 'Too many requests/events within timeframe.' } }, { 'retry-after': '10' }), 0)).toMatchObject({
      kind: 'retry', afterMs: 10_000, error: { code: 'rate_limited' },
    });
    expect(classifyRedditAnswer(answer(500, { error: { message: 'The service is currently unavailable.' } }), 0)).toMatchObject({ kind: 'retry' });
    expect(classifyRedditAnswer(answer(401, { error: { message: 'UNAUTHORIZED' } }), 0)).toMatchObject({ kind: 'token_refused', error: { code: 'invalid_token', hint: expect.stringContaining('Generate a new conversion access token') } });
    expect(classifyRedditAnswer(answer(403, { error: { message: 'not authorized' } }), 0)).toMatchObject({ kind: 'failed', error: { code: 'permission_denied' } });
    expect(classifyRedditAnswer(answer(400, { error: { message: 'There were 1 invalid conversion events. None were processed.' } }), 0)).toMatchObject({
      kind: 'invalid_event', error: { message: expect.stringContaining('None were processed') },
    });
  });
});
