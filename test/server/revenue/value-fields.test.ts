/** Each platform's own value fields, built from one delivery input (units: no I/O). */
import { describe, expect, it } from 'vitest';
import { prepareEvent } from '../../../src/server/destinations/google-ads/data-manager-request';
import { buildServerEvent } from '../../../src/server/destinations/meta/request';
import { prepareConversion } from '../../../src/server/destinations/microsoft-ads/request';
import { buildConversionEvent } from '../../../src/server/destinations/linkedin/request';
import { checkMetaAction } from '../../../src/server/destinations/meta/action-config';
import { input as googleInput } from '../destinations/google-ads/inputs';
import { metaInput, NOW as META_NOW } from '../destinations/meta/fixtures';
import { input as microsoftInput } from '../destinations/microsoft-ads/fixtures';
import { input as linkedinInput } from '../destinations/linkedin/inputs';

const valued = { value: 29.9, currency: 'EUR', customerId: 'acct_1' } as const;

describe('value fields per platform', () => {
  it('Google Data Manager: Event.conversionValue (a number) and Event.currency', () => {
    const prepared = prepareEvent(googleInput(valued), { customerId: '1234567890', loginCustomerId: null });
    expect(prepared.ok && prepared.prepared.event).toMatchObject({ conversionValue: 29.9, currency: 'EUR' });
    const none = prepareEvent(googleInput(), { customerId: '1234567890', loginCustomerId: null });
    expect(none.ok && 'conversionValue' in none.prepared.event).toBe(false);
  });

  it('Meta: custom_data.value and custom_data.currency; a later stage worth more than 0 defaults to Purchase, a free one to Lead', () => {
    const built = buildServerEvent(metaInput(valued), '123', META_NOW);
    expect(built.ok && built.event.custom_data).toEqual({ value: 29.9, currency: 'EUR' });
    const stage = buildServerEvent(metaInput({ ...valued, trigger: 'conversion' }), '123', META_NOW);
    expect(stage.ok && stage.event.event_name).toBe('Purchase');
    const trial = buildServerEvent(metaInput({ value: 0, currency: 'EUR', trigger: 'conversion' }), '123', META_NOW);
    expect(trial.ok && trial.event.event_name).toBe('Lead');
    const unvalued = buildServerEvent(metaInput({ trigger: 'conversion' }), '123', META_NOW);
    expect(unvalued.ok && unvalued.event.event_name).toBe('Lead');
    const purchaseWithout = buildServerEvent(metaInput({ actionConfig: { event_name: 'Purchase' } }), '123', META_NOW);
    expect(!purchaseWithout.ok && purchaseWithout.error.code).toBe('value_missing');
    expect(checkMetaAction({ event_name: 'Purchase' }, 'c', 'conversion')).toEqual([]);
    expect(checkMetaAction({ event_name: 'Purchase' }, 'c', 'form_submission')).toHaveLength(1);
  });

  it("Microsoft: ConversionValue and ConversionCurrencyCode, the report's value before the action's fixed one", () => {
    const now = new Date('2026-11-21T10:00:00.000Z');
    const fixed = { conversion_name: 'Signup', value: 5, currency: 'USD' };
    const prepared = prepareConversion(microsoftInput({ ...valued, actionConfig: fixed }), now);
    expect(prepared.ok && prepared.conversion).toMatchObject({ ConversionValue: 29.9, ConversionCurrencyCode: 'EUR' });
    const fallback = prepareConversion(microsoftInput({ actionConfig: fixed }), now);
    expect(fallback.ok && fallback.conversion).toMatchObject({ ConversionValue: 5, ConversionCurrencyCode: 'USD' });
  });

  it('LinkedIn: conversionValue {currencyCode, amount as a decimal string}', () => {
    const now = new Date('2026-11-21T10:00:00.000Z');
    const built = buildConversionEvent(linkedinInput({ ...valued, value: 0.000001 }), now);
    expect(built.ok && built.element.conversionValue).toEqual({ currencyCode: 'EUR', amount: '0.000001' });
    const big = buildConversionEvent(linkedinInput({ ...valued, value: 1_000_000_000 }), now);
    expect(big.ok && big.element.conversionValue).toEqual({ currencyCode: 'EUR', amount: '1000000000' });
  });
});
