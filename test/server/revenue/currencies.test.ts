/** The currencies a value may be reported in: one fixed ISO 4217 list (src/protocol/currencies.ts), not the runtime's. */
import { describe, expect, it } from 'vitest';
import { CURRENCY_CODES, CURRENCY_PATTERN, isCurrencyCode } from '../../../src/protocol/currencies';
import { validateConversion } from '../../../src/server/webhook/conversion-input';
import { checkValue } from '../../../src/client/report-input';

const NOW = new Date('2026-11-28T12:00:00Z');

describe('the currency list', () => {
  it('is sorted, without repeats, every code three capital letters', () => {
    expect([...CURRENCY_CODES].sort()).toEqual(CURRENCY_CODES);
    expect(new Set(CURRENCY_CODES).size).toBe(CURRENCY_CODES.length);
    for (const code of CURRENCY_CODES) expect(code).toMatch(CURRENCY_PATTERN);
    // ISO 4217 List One of 2026-01-01 holds 178 codes; 23 of them are funds, metals, units of account and test codes.
    expect(CURRENCY_CODES.length).toBe(155);
  });

  it('takes the currencies people pay in, the newest among them', () => {
    for (const code of ['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'BHD', 'XCG', 'ZWG', 'SLE', 'VED', 'VES', 'MRU', 'STN']) {
      expect(isCurrencyCode(code), code).toBe(true);
    }
  });

  it('refuses withdrawn currencies, whatever the runtime still knows of them', () => {
    // ANG (2025-03, now XCG), BGN (2026-01, the euro), HRK (2023-01), CUC (2021-06), SLL (2023-12, now SLE),
    // ZWL (2024-09, now ZWG), and older ones.
    for (const code of ['ANG', 'BGN', 'HRK', 'CUC', 'SLL', 'ZWL', 'MRO', 'STD', 'VEF', 'BYR', 'LTL', 'DEM']) {
      expect(isCurrencyCode(code), code).toBe(false);
    }
  });

  it('refuses funds, metals, units of account, the test code and "no currency"', () => {
    for (const code of ['CLF', 'USN', 'BOV', 'XAU', 'XAG', 'XDR', 'XSU', 'XAD', 'XBA', 'XTS', 'XXX']) {
      expect(isCurrencyCode(code), code).toBe(false);
    }
  });

  it('refuses what is not a code as written', () => {
    for (const code of ['usd', 'Usd', 'US', 'USDX', ' USD', 'USD\u0000', '', 840, null, undefined, ['USD'], { USD: 1 }]) {
      expect(isCurrencyCode(code), String(code)).toBe(false);
    }
  });

  it('gives the service and the Node client the same answer', () => {
    for (const currency of ['EUR', 'XCG', 'VED', 'HRK', 'BGN', 'XAU', 'ZZZ']) {
      const service = (() => {
        try {
          validateConversion({ customer_event_id: 'e', customer_id: 'c', value: 5, currency }, NOW);
          return true;
        } catch {
          return false;
        }
      })();
      expect(service, currency).toBe(isCurrencyCode(currency));
      const client = checkValue({ value: 5, currency });
      expect(client === null, currency).toBe(isCurrencyCode(currency));
    }
  });
});
