/** One rule for a conversion value, float noise aside (src/protocol/webhook.ts), on every body that takes one (units). */
import { describe, expect, it } from 'vitest';
import { conversionValueOf, isConversionValue } from '../../../src/protocol/webhook';
import { validateAdjustment, validateConversion } from '../../../src/server/webhook/conversion-input';

const NOW = new Date('2026-03-01T12:00:00Z');

describe('a conversion value, float noise aside', () => {
  it('counts a number within float noise of 6 decimals as that rounded value', () => {
    let sum = 0;
    for (let i = 0; i < 1000; i++) sum += 0.1;
    expect(conversionValueOf(29.9 * 1.19)).toBe(35.581);
    expect(conversionValueOf(100 * 1.1)).toBe(110);
    expect(conversionValueOf(0.1 + 0.2)).toBe(0.3);
    expect(conversionValueOf(sum)).toBe(100);
    expect(conversionValueOf(1_000_000.1 - 1_000_000)).toBe(0.1);
    expect(conversionValueOf(999_999_999.99 * 1)).toBe(999_999_999.99);
    expect(conversionValueOf(0.000001)).toBe(0.000001);
    expect(conversionValueOf(0)).toBe(0);
  });

  it('refuses a value with decimals a caller wrote past the 6th, and anything out of range or not a number', () => {
    for (const value of [1.2345678, 1.1234567, 0.00000005, 1e-7, 1.00000001, -0.1, 1_000_000_000.5, Number.NaN, Infinity, '10', null]) {
      expect(conversionValueOf(value), String(value)).toBeNull();
      expect(isConversionValue(value)).toBe(false);
    }
  });

  it('gives a later stage and a restatement the rounded value', () => {
    expect(validateConversion({ customer_event_id: 'e', customer_id: 'c', value: 29.9 * 1.19, currency: 'EUR' }, NOW).value).toBe(35.581);
    expect(validateAdjustment({ adjustment_id: 'a', customer_event_id: 'e', type: 'restate', value: 100 * 1.1, currency: 'EUR' }, NOW).value).toBe(110);
    expect(() => validateConversion({ customer_event_id: 'e', customer_id: 'c', value: 1.2345678, currency: 'EUR' }, NOW)).toThrow(/value/);
    expect(() => validateAdjustment({ adjustment_id: 'a', customer_event_id: 'e', type: 'restate', value: 49, currency: 'usd' }, NOW)).toThrow(/use USD/);
  });
});
