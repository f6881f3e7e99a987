/** A connect field with choices (Google's API) is a select on the hosted page, the sent value chosen again after an error. */
import { describe, expect, it } from 'vitest';
import { destinationFormPage } from '../../src/server/api/handoffs/hosted-pages';
import { platformFor } from '../../src/server/destinations';

describe("the hosted connect form's choices", () => {
  const google = platformFor('google-ads')!;
  const hosted = {
    kind: 'destination', handoff: { token: 'tok' }, destination: google, authorized: true, signedIn: true, signInOffered: false,
    replaces: null, accountName: 'My Account', apiElsewhere: null,
  } as unknown as Parameters<typeof destinationFormPage>[0];

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
});
