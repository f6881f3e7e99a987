/**
 * The currencies a value may be reported in: one fixed list, so that the service and the Node client give the same
 * answer whatever JavaScript runtime runs them. (Until 2026-11 the check asked the runtime's ICU data,
 * `Intl.supportedValuesOf('currency')`: this machine's Node 20 (ICU 78.2) still accepted the withdrawn ANG, BGN, CUC,
 * HRK, SLL and ZWL and refused the current VED, and a client on a runtime with other ICU data answered otherwise.)
 *
 * Source: ISO 4217 List One ("Current currency & funds code list"), as the maintenance agency (SIX) publishes it,
 * read through datasets/currency-codes' `data/codes-all.csv` at its commit of 2026-02-01 (the codes without a
 * withdrawal date: 178, the count of the list published 2026-01-01). Verified there: XCG current (amendment 176,
 * from 2025-03-31) and ANG withdrawn 2025-03; BGN withdrawn 2026-01 (Bulgaria's euro); HRK 2023-01; CUC 2021-06;
 * SLL 2023-12 (SLE current); ZWL 2024-09 (ZWG current); VED current beside VES.
 *
 * Left out of List One's 178, because no purchase is priced in them (not checked against each platform's own
 * list): the funds codes (List Two: BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW), the precious metals (XAG, XAU,
 * XPD, XPT), the units of account and bond market units (XAD, XBA, XBB, XBC, XBD, XDR, XSU, XUA), the testing code XTS
 * and XXX ("no currency"). Each ad platform may support fewer: a platform's refusal of a currency is reported on the
 * delivery as that platform words it.
 *
 * When ISO amends List One (a currency created or withdrawn), change this list and its date; test/server/revenue/
 * currencies.test.ts holds the withdrawn codes that must stay refused.
 */

/** The date of the List One this list follows (its latest change taken into account). */
export const CURRENCY_LIST_AS_OF = '2026-01-01';

/** ISO 4217 alphabetic codes of current currencies, sorted. */
export const CURRENCY_CODES: readonly string[] = Object.freeze(
  (
    'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY ' +
    'COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ' +
    'ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK ' +
    'MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF ' +
    'SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU ' +
    'UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG'
  ).split(' '),
);

/** An ISO 4217 code as written: three capital letters (the service also checks it names a current currency). */
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;

const CURRENCY_SET: ReadonlySet<string> = new Set(CURRENCY_CODES);

/**
 * Whether a code names a current currency as a report must write it: three capital letters that CURRENCY_CODES holds
 * ('XXX', 'usd', 'HRK' and 'ABC' do not qualify).
 */
export function isCurrencyCode(code: unknown): code is string {
  return typeof code === 'string' && CURRENCY_SET.has(code);
}
