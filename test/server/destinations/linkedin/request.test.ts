import { describe, expect, it } from 'vitest';
import { checkLinkedInAction, parseConversionRule } from '../../../../src/server/destinations/linkedin/action-config';
import { parseLinkedInConnectForm } from '../../../../src/server/destinations/linkedin/connect';
import { batchCreateHeaders, buildConversionEvent } from '../../../../src/server/destinations/linkedin/request';
import { linkedinPlatform } from '../../../../src/server/destinations/linkedin';
import { loadSettings } from '../../../../src/server/settings';
import { input, NOW } from './inputs';

describe('LinkedIn request building', () => {
  it("builds the element LinkedIn documents: rule URN, time in milliseconds, eventId (the report's customer_event_id), user ids and names", () => {
    const built = buildConversionEvent(input({ actionConfig: { conversion_rule: 'urn:lla:llaPartnerConversion:104012', value: 49.5, currency: 'EUR' } }), NOW);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.element).toEqual({
      conversion: 'urn:lla:llaPartnerConversion:104012',
      conversionHappenedAt: NOW.getTime() - 3_600_000,
      conversionValue: { currencyCode: 'EUR', amount: '49.5' },
      eventId: 'signup-evt_01',
      user: {
        userIds: [
          { idType: 'SHA256_EMAIL', idValue: '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d' },
          { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'df5gf5-gh6t7-ph4j7h-fgf6n1' },
        ],
        userInfo: { firstName: 'Jane', lastName: 'Doe' },
      },
    });
  });

  it('keeps the same eventId when the same conversion is built again, so LinkedIn counts a resend once', () => {
    const a = buildConversionEvent(input(), NOW);
    const b = buildConversionEvent(input(), new Date(NOW.getTime() + 60_000));
    expect(a.ok && b.ok && a.element.eventId === b.element.eventId).toBe(true);
  });

  it('summarises with hashes and kinds only: no email, click id or name appears in it', () => {
    const built = buildConversionEvent(input(), NOW);
    const text = JSON.stringify(built.summary);
    expect(text).not.toMatch(/jane|doe|df5gf5/i);
    expect(built.summary.user_info).toEqual(['firstName', 'lastName']);
  });

  it('sends an event with names but no email and no li_fat_id, userIds empty', () => {
    const built = buildConversionEvent(input({ clickIds: {}, identity: { first_name: 'Jane', last_name: 'Doe' } }), NOW);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.element.user).toEqual({ userIds: [], userInfo: { firstName: 'Jane', lastName: 'Doe' } });
  });

  it('fails an event with no email, no li_fat_id and no names permanently, with a hint', () => {
    const built = buildConversionEvent(input({ clickIds: {}, identity: { first_name: 'Jane' } }), NOW);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.error.code).toBe('no_user_id');
    expect(built.error.hint).toMatch(/email/);
  });

  it('fails an event older than 90 days without sending it', () => {
    const built = buildConversionEvent(input({ occurredAt: new Date(NOW.getTime() - 91 * 86_400_000) }), NOW);
    expect(!built.ok && built.error.code).toBe('conversion_too_old');
    expect(buildConversionEvent(input({ occurredAt: new Date(NOW.getTime() - 89 * 86_400_000) }), NOW).ok).toBe(true);
  });

  it('sends the versioned Rest.li headers with the batch-create method', () => {
    const headers = batchCreateHeaders(loadSettings({ CNV_LINKEDIN_API_VERSION: '202607' }), 'tok');
    expect(headers).toEqual({
      authorization: 'Bearer tok',
      'linkedin-version': '202607',
      'x-restli-protocol-version': '2.0.0',
      'x-restli-method': 'BATCH_CREATE',
    });
  });
});

describe('LinkedIn action config and connect form', () => {
  it('accepts a conversion rule as an id, a number or a URN', () => {
    expect(parseConversionRule('104012')).toEqual({ id: '104012', urn: 'urn:lla:llaPartnerConversion:104012' });
    expect(parseConversionRule(104012)?.urn).toBe('urn:lla:llaPartnerConversion:104012');
    expect(parseConversionRule('urn:lla:llaPartnerConversion:104012')?.id).toBe('104012');
    expect(parseConversionRule('urn:li:conversion:1')).toBeNull();
    expect(parseConversionRule('abc')).toBeNull();
  });

  it('reports a missing rule, a value without currency and unknown settings at their paths', () => {
    expect(linkedinPlatform.checkAction({ conversion_rule: '1' }, 'actions_config[0].config', 'saas_signup')).toEqual([]);
    const problems = checkLinkedInAction({ value: 10, colour: 'red' }, 'actions_config[0].config');
    expect(problems.map((p) => p.param)).toEqual([
      'actions_config[0].config.conversion_rule',
      'actions_config[0].config.currency',
      'actions_config[0].config.colour',
    ]);
  });

  it("holds a fixed value and currency to a report's rules: a real ISO 4217 code in capitals, 0 to 1e9, at most 6 decimals", () => {
    const paramsOf = (config: Record<string, unknown>) => checkLinkedInAction({ conversion_rule: '1', ...config }, 'p').map((p) => p.param);
    expect(paramsOf({ value: 49.5, currency: 'EUR' })).toEqual([]);
    expect(paramsOf({ value: 0.123456, currency: 'JPY' })).toEqual([]);
    expect(paramsOf({ value: 5, currency: 'XXX' })).toEqual(['p.currency']);
    expect(paramsOf({ value: 5, currency: 'ABC' })).toEqual(['p.currency']);
    expect(paramsOf({ value: 5, currency: 'usd' })).toEqual(['p.currency']);
    expect(paramsOf({ value: 1.1234567, currency: 'USD' })).toEqual(['p.value']);
    expect(paramsOf({ value: 1_000_000_001, currency: 'USD' })).toEqual(['p.value']);
    expect(paramsOf({ value: -1, currency: 'USD' })).toEqual(['p.value']);
    expect(paramsOf({ currency: 'USD' })).toEqual(['p.value']);
    expect(checkLinkedInAction({ conversion_rule: '1', value: 5, currency: 'XXX' }, 'p')[0]!.message).toMatch(/ISO 4217/);
  });

  it('stores the ad account from the connect form as an id and a URN', () => {
    expect(parseLinkedInConnectForm({ ad_account_id: ' urn:li:sponsoredAccount:507404993 ' })).toEqual({
      ok: true,
      settings: { ad_account_id: '507404993', ad_account_urn: 'urn:li:sponsoredAccount:507404993' },
      credentials: {},
      summary: 'LinkedIn ad account 507404993',
    });
    expect(parseLinkedInConnectForm({ ad_account_id: 'my account' }).ok).toBe(false);
  });

  it('asks LinkedIn for rw_conversions and r_ads and takes batches of up to 5000 events', () => {
    expect(linkedinPlatform.oauth?.scopes).toEqual(['rw_conversions', 'r_ads']);
    expect(linkedinPlatform.maxBatchSize).toBe(5000);
  });
});
