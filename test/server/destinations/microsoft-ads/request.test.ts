import { describe, expect, it } from 'vitest';
import { checkAction, parseConnectForm } from '../../../../src/server/destinations/microsoft-ads/connect';
import { apiHeaders, applyUrl, developerToken, prepareConversion } from '../../../../src/server/destinations/microsoft-ads/request';
import { microsoftOAuth } from '../../../../src/server/destinations/microsoft-ads/oauth';
import { loadSettings } from '../../../../src/server/settings';
import { CLICK_ID, NOW, context, input } from './fixtures';

const JOHN = 'ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602';
const DAY = 86_400_000;

function prepared(overrides: Parameters<typeof input>[0] = {}) {
  const result = prepareConversion(input(overrides), NOW);
  if (!result.ok) throw new Error(`expected a conversion, got ${JSON.stringify(result.outcome)}`);
  return result;
}

describe('building an ApplyOfflineConversions row', () => {
  it('sends the goal name, the UTC conversion time, the click id and the hashed email', () => {
    const { conversion, summary } = prepared();
    expect(conversion).toEqual({ ConversionName: 'Signup', ConversionTime: '2026-11-21T09:00:00.000Z', MicrosoftClickId: CLICK_ID, HashedEmailAddress: JOHN });
    expect(summary).toEqual({ conversion_name: 'Signup', conversion_time: '2026-11-21T09:00:00.000Z', microsoft_click_id: CLICK_ID, click_id_source: 'msclkid', hashed_email: JOHN });
  });

  it('keeps the event time on every attempt, so Microsoft ignores a resent conversion as a duplicate', () => {
    const first = prepareConversion(input(), NOW);
    const later = prepareConversion(input(), new Date(NOW.getTime() + 3 * 3_600_000));
    expect(first).toEqual(later);
  });

  it('never puts a raw email or phone in the request summary', () => {
    const { summary } = prepared({ identity: { email: 'John@Contoso.com', phone: '+1 425 555 1234', first_name: 'John', last_name: 'Doe' } });
    const text = JSON.stringify(summary).toLowerCase();
    for (const raw of ['john@contoso.com', '4255551234', 'doe']) expect(text).not.toContain(raw);
  });

  it('sends the value and currency of the action config, and the goal name untouched', () => {
    const { conversion } = prepared({ actionConfig: { conversion_name: 'Trial Signup ', value: 49.5, currency: 'eur' } });
    expect(conversion.ConversionName).toBe('Trial Signup ');
    expect(conversion.ConversionValue).toBe(49.5);
    expect(conversion.ConversionCurrencyCode).toBe('EUR');
  });

  it("uses the UET cookie's click id when the landing carried none", () => {
    const { conversion, summary } = prepared({ clickIds: {}, cookies: { _uetmsclkid: `_uet${CLICK_ID}` } });
    expect(conversion.MicrosoftClickId).toBe(CLICK_ID);
    expect(summary.click_id_source).toBe('_uetmsclkid');
  });

  it('sends a conversion without a click id when a hashed email or phone can match it (enhanced conversions)', () => {
    const { conversion } = prepared({ clickIds: {}, identity: { phone: '+14255551234' } });
    expect(conversion.MicrosoftClickId).toBeUndefined();
    expect(conversion.HashedPhoneNumber).toBe('c59475d96e9f01d7d18d06cfad84dd02333207f02c0c2c5663ef2782cda0390e');
  });

  it('sends nothing (skipped, with the reason) when the page said ad_user_data was denied: no click id, email or phone', () => {
    const result = prepareConversion(input({ consent: { ad_user_data: 'denied', ad_personalization: null }, identity: { email: 'john@contoso.com', phone: '+14255551234' } }), NOW);
    expect(result).toMatchObject({ ok: false, outcome: { kind: 'skipped', reason: { code: 'consent_denied' } } });
    expect(JSON.stringify(result)).not.toContain(CLICK_ID);
  });

  it('fails without sending when there is neither a click id nor an email or phone', () => {
    const result = prepareConversion(input({ clickIds: {}, identity: {} }), NOW);
    expect(result).toMatchObject({ ok: false, outcome: { kind: 'failed', error: { code: 'no_match_key' } } });
  });

  it('fails a conversion older than 90 days without sending it', () => {
    const result = prepareConversion(input({ occurredAt: new Date(NOW.getTime() - 91 * DAY) }), NOW);
    expect(result).toMatchObject({ ok: false, outcome: { kind: 'failed', error: { code: 'conversion_too_old' } } });
  });

  it('drops a click more than 90 days older than the conversion, and fails when nothing else can match', () => {
    const old = { occurredAt: new Date(NOW.getTime() - DAY), touchCapturedAt: new Date(NOW.getTime() - 95 * DAY) };
    expect(prepared(old).conversion.MicrosoftClickId).toBeUndefined();
    expect(prepareConversion(input({ ...old, identity: {} }), NOW)).toMatchObject({ ok: false, outcome: { error: { code: 'no_match_key' } } });
  });

  it('waits for a conversion dated slightly ahead of now, and refuses one dated days ahead', () => {
    expect(prepareConversion(input({ occurredAt: new Date(NOW.getTime() + 60_000) }), NOW)).toMatchObject({ ok: false, outcome: { kind: 'retry_later', afterMs: 61_000 } });
    expect(prepareConversion(input({ occurredAt: new Date(NOW.getTime() + 3 * DAY) }), NOW)).toMatchObject({ ok: false, outcome: { kind: 'failed' } });
  });

  it('builds the four documented headers and the REST URL', () => {
    expect(apiHeaders('tok', 'DEV', { customerId: '1', accountId: '2' })).toEqual({ Authorization: 'Bearer tok', DeveloperToken: 'DEV', CustomerId: '1', CustomerAccountId: '2' });
    expect(applyUrl(loadSettings({}).microsoft.adsApiBase)).toBe('https://campaign.api.bingads.microsoft.com/CampaignManagement/v13/OfflineConversions/Apply');
  });

  it("uses the connection's developer token when the user entered one, else the service's", () => {
    const ctx = context({ CNV_MICROSOFT_ADS_DEVELOPER_TOKEN: 'SERVICE' }, async () => 't');
    expect(developerToken(ctx)).toBe('SERVICE');
    expect(developerToken({ ...ctx, connection: { ...ctx.connection, credentials: { developer_token: 'OWN' } } })).toBe('OWN');
  });
});

describe('connecting Microsoft Advertising', () => {
  it('keeps the customer and account ids as settings and an entered developer token as a credential', () => {
    expect(parseConnectForm({ customer_id: ' 123456789 ', account_id: '987654321', developer_token: 'ABC123' })).toEqual({
      ok: true,
      settings: { customer_id: '123456789', account_id: '987654321' },
      credentials: { developer_token: 'ABC123' },
      summary: 'Microsoft Advertising account 987654321 (customer 123456789)',
    });
  });

  it('tells an account number from an account id', () => {
    const result = parseConnectForm({ customer_id: '123', account_id: 'F123ABCD' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]).toMatchObject({ param: 'account_id', message: expect.stringContaining('account number') });
  });

  it('asks for the exact goal name and explains that Microsoft drops conversions whose name matches no goal', () => {
    const [problem] = checkAction({}, 'actions_config[0].config', 'saas_signup');
    expect(problem?.param).toBe('actions_config[0].config.conversion_name');
    expect(problem?.message).toMatch(/exactly/);
    expect(problem?.message).toMatch(/drops/);
    expect(checkAction({ conversion_name: 'Signup', value: 10, currency: 'USD' }, 'p', 'form_submission')).toEqual([]);
  });

  it('refuses a goal name holding a control character, which no one-line goal name can match', () => {
    for (const conversion_name of ['Sign\nup', 'Signup\t', '\u001b[31mSignup', 'Sign\u0085up']) {
      const problems = checkAction({ conversion_name }, 'p', 'saas_signup');
      expect(problems).toEqual([{ param: 'p.conversion_name', message: expect.stringContaining('control character') }]);
    }
    expect(checkAction({ conversion_name: 'Trial – Signup (EU)' }, 'p', 'saas_signup')).toEqual([]);
  });

  it('refuses a negative value, a malformed currency and a currency without a value', () => {
    expect(checkAction({ conversion_name: 'Signup', value: -1 }, 'p', 'saas_signup').map((p) => p.param)).toEqual(['p.value']);
    expect(checkAction({ conversion_name: 'Signup', value: 1, currency: 'dollars' }, 'p', 'saas_signup').map((p) => p.param)).toEqual(['p.currency']);
    expect(checkAction({ conversion_name: 'Signup', currency: 'USD' }, 'p', 'saas_signup').map((p) => p.param)).toEqual(['p.currency']);
    expect(checkAction({ conversion_name: 'x'.repeat(101) }, 'p', 'saas_signup').map((p) => p.param)).toEqual(['p.conversion_name']);
  });

  it("holds a fixed value and currency to a report's rules: a real ISO 4217 code in capitals, 0 to 1e9, at most 6 decimals", () => {
    const paramsOf = (config: Record<string, unknown>) => checkAction({ conversion_name: 'Signup', ...config }, 'p', 'saas_signup').map((p) => p.param);
    expect(paramsOf({ value: 0.123456, currency: 'EUR' })).toEqual([]);
    expect(paramsOf({ value: 1_000_000_000 })).toEqual([]);
    expect(paramsOf({ value: 5, currency: 'XXX' })).toEqual(['p.currency']);
    expect(paramsOf({ value: 5, currency: 'ABC' })).toEqual(['p.currency']);
    expect(paramsOf({ value: 5, currency: 'usd' })).toEqual(['p.currency']);
    expect(paramsOf({ value: 1.1234567, currency: 'USD' })).toEqual(['p.value']);
    expect(paramsOf({ value: 1_000_000_001, currency: 'USD' })).toEqual(['p.value']);
    expect(checkAction({ conversion_name: 'Signup', value: 5, currency: 'XXX' }, 'p', 'saas_signup')[0]!.message).toMatch(/ISO 4217/);
  });

  it("signs in through Microsoft's identity platform with the Advertising scope and offline_access", () => {
    const settings = loadSettings({ CNV_MICROSOFT_OAUTH_CLIENT_ID: 'app', CNV_MICROSOFT_OAUTH_CLIENT_SECRET: 'secret' });
    expect(microsoftOAuth.authorizeUrl(settings)).toBe('https://login.microsoftonline.com/common/oauth2/v2.0/authorize');
    expect(microsoftOAuth.tokenUrl(settings)).toBe('https://login.microsoftonline.com/common/oauth2/v2.0/token');
    expect(microsoftOAuth.clientId(settings)).toBe('app');
    expect(microsoftOAuth.clientSecret(settings)).toBe('secret');
    expect(microsoftOAuth.scopes).toEqual(['https://ads.microsoft.com/msads.manage', 'offline_access']);
    // The account picker every time, so a sign-in never completes unseen (prompt=select_account, documented by Microsoft).
    expect(microsoftOAuth.extraAuthorizeParams).toEqual({ response_mode: 'query', prompt: 'select_account' });
  });
});
