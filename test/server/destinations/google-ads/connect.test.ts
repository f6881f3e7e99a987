/** The hosted connect form of Google Ads, after Google's OAuth step: account ids and the API to send through. */
import { describe, expect, it } from 'vitest';
import { GOOGLE_ADS_FIELDS, parseGoogleAdsConnectForm } from '../../../../src/server/destinations/google-ads/connect';

describe('the Google Ads connect form', () => {
  it('takes the customer id with or without dashes and defaults to the Data Manager API', () => {
    expect(parseGoogleAdsConnectForm({ customer_id: '123-456-7890' })).toEqual({
      ok: true,
      settings: { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
      credentials: {},
      summary: 'Google Ads customer 123-456-7890',
    });
  });

  it('takes the legacy Google Ads API without a developer token (Google sunset them on 9 September 2026)', () => {
    expect(parseGoogleAdsConnectForm({ customer_id: '1234567890', login_customer_id: '987-654-3210', api: 'google_ads_api' })).toEqual({
      ok: true,
      settings: { customer_id: '1234567890', login_customer_id: '9876543210', api: 'google_ads_api' },
      credentials: {},
      summary: 'Google Ads customer 123-456-7890 (Google Ads API)',
    });
    expect(GOOGLE_ADS_FIELDS.map((field) => field.name)).toEqual(['customer_id', 'login_customer_id', 'api']);
  });

  it('says what is wrong with each field', () => {
    expect(parseGoogleAdsConnectForm({ customer_id: '12345', login_customer_id: 'abc', api: 'adwords' })).toEqual({
      ok: false,
      errors: [
        { param: 'customer_id', message: 'A customer ID has 10 digits, for example 123-456-7890.' },
        { param: 'login_customer_id', message: 'A manager account ID has 10 digits, for example 987-654-3210.' },
        { param: 'api', message: "Choose Google's Data Manager API or the Google Ads API." },
      ],
    });
    expect(parseGoogleAdsConnectForm({})).toMatchObject({ ok: false, errors: [{ param: 'customer_id', message: 'Enter the Google Ads customer ID.' }] });
  });
});
