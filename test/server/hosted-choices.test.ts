/**
 * A connect field with choices (Google's API) is a select on the hosted page, the sent value chosen again after an error;
 * a field the service's operator set for everyone (Microsoft's developer token) is left out.
 */
import { describe, expect, it } from 'vitest';
import { destinationFormPage } from '../../src/server/api/handoffs/hosted-pages';
import { providedFields } from '../../src/server/api/handoffs/completion';
import { platformFor } from '../../src/server/destinations';
import { loadSettings } from '../../src/server/settings';

describe("the hosted connect form's choices", () => {
  const google = platformFor('google-ads')!;
  const hosted = {
    kind: 'destination', handoff: { token: 'tok' }, destination: google, authorized: true, signedIn: true, signInOffered: false,
    replaces: null, accountName: 'My Account', apiElsewhere: null, provided: [], signInChoices: {},
  } as unknown as Parameters<typeof destinationFormPage>[0];

  // After a sign-in that chose nothing first (one started before the API was asked on the sign-in page).
  it('offers Google\u2019s two APIs as a choice, the Data Manager API first', () => {
    const page = destinationFormPage(hosted);
    expect(page).toMatch(/<label for="api">Send through<\/label>[\s\S]*<select id="api" name="api"/);
    expect(page.indexOf('value="data_manager"')).toBeLessThan(page.indexOf('value="google_ads_api"'));
    expect(page).not.toContain('<input type="text" id="api"');
  });

  it('keeps the choice sent when the form comes back with an error', () => {
    const page = destinationFormPage(hosted, { customer_id: 'x', api: 'google_ads_api' }, [{ param: 'customer_id', message: 'A customer ID has 10 digits.' }]);
    expect(page).toContain('<option value="google_ads_api" selected>');
    expect(page).not.toContain('<option value="data_manager" selected>');
  });

  it('shows the API chosen before the sign-in as made, not as a field, with the way to change it', () => {
    const page = destinationFormPage({ ...hosted, signInChoices: { api: 'google_ads_api' } } as typeof hosted);
    expect(page).not.toContain('name="api"');
    expect(page).toContain('Send through: <strong>Google Ads API (legacy)</strong>, chosen before signing in.');
    expect(page).toContain('href="/handoffs/tok?sign_in=again"');
  });

  it("leaves Microsoft's developer token out when the service has one for every account, and shows it otherwise", () => {
    const microsoft = platformFor('microsoft-ads')!;
    const pageWith = (env: Record<string, string>) =>
      destinationFormPage({ ...hosted, destination: microsoft, provided: providedFields(loadSettings(env), microsoft) } as typeof hosted);
    const withToken = pageWith({ CNV_MICROSOFT_ADS_DEVELOPER_TOKEN: 'service-token' });
    expect(withToken).not.toContain('id="developer_token"');
    expect(withToken).toContain('id="account_id"');
    expect(pageWith({ CNV_MICROSOFT_ADS_DEVELOPER_TOKEN: '' })).toContain('<input type="password" id="developer_token"');
  });

  it('starts a reconnect at the Limited Data Use the connection chose, so a new token does not turn it off', () => {
    const meta = platformFor('meta')!;
    const reconnect = (settings: Record<string, unknown> | null) =>
      destinationFormPage({ ...hosted, destination: meta, signedIn: false, replaces: settings && { status: 'connected', settings } } as typeof hosted);
    expect(reconnect({ pixel_id: '1234567890123456', limited_data_use: true })).toContain('<option value="on" selected>');
    expect(reconnect({ pixel_id: '1234567890123456' })).toContain('<option value="off" selected>');
    expect(reconnect(null)).toContain('<option value="off" selected>');
    // What the person sent wins over the stored choice.
    expect(destinationFormPage({ ...hosted, destination: meta, signedIn: false, replaces: { status: 'connected', settings: { limited_data_use: true } } } as typeof hosted,
      { limited_data_use: 'off' })).toContain('<option value="off" selected>');
  });
});
