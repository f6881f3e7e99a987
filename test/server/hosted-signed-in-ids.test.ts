/**
 * After the platform's sign-in, the hosted page checks the ids typed in with the platform's connection test before
 * storing anything, as it checks a pasted token: Microsoft's customer and account ids, LinkedIn's ad account. Ids the
 * signed-in user may not use are refused on their fields and nothing is stored; right ids connect; a platform that
 * cannot be reached connects as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { cookieHeaderFrom } from './support/browser-cookies';
import { DEMO_FORM_VALUES, settingsForDemoPlatforms, startDemoAdPlatforms, type DemoAdPlatforms } from '../../src/demo/ad-platforms';
import { loadSettings, type Settings } from '../../src/server/settings';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const pathOf = (url: string) => new URL(url).pathname;

describe.each(DATABASE_KINDS)('ids checked after the sign-in on the hosted page on $name', (kind) => {
  let fakes: DemoAdPlatforms;
  let svc: RestService;
  let unreachable: RestService;
  beforeAll(async () => {
    fakes = await startDemoAdPlatforms(loadSettings({}).meta.apiVersion);
    svc = await createRestService(kind, {}, undefined, (settings) => settingsForDemoPlatforms(settings, fakes));
    // Sign-in reaches the fakes; the platforms' APIs do not (nothing listens on port 9).
    unreachable = await createRestService(kind, {}, undefined, (settings): Settings => {
      const faked = settingsForDemoPlatforms(settings, fakes);
      return { ...faked, microsoft: { ...faked.microsoft, adsApiBase: 'http://127.0.0.1:9' }, linkedin: { ...faked.linkedin, apiBase: 'http://127.0.0.1:9' } };
    });
  });
  afterAll(async () => {
    await svc?.close();
    await unreachable?.close();
    await fakes?.close();
  });

  /** A new tenant's handoff for `type`, signed in with the platform's fake (which consents at once). */
  async function signedIn(on: RestService, type: string) {
    const tenant = await on.addTenant(`${type} tenant`);
    const handoff = json<{ id: string; url: string }>(
      await on.app.inject({ method: 'POST', url: '/v1/handoffs', headers: tenant.auth, payload: { purpose: 'connect_destination', destination_type: type } }),
    );
    const start = await on.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize` });
    expect(start.statusCode).toBe(302);
    const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location')!);
    const cookie = cookieHeaderFrom(start.headers['set-cookie']);
    expect((await on.app.inject({ method: 'GET', url: callback.pathname + callback.search, headers: { cookie } })).statusCode).toBe(303);
    const submit = (form: Record<string, string>) =>
      on.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: new URLSearchParams(form).toString() });
    const stored = () => on.db.query<{ type: string; settings: Record<string, unknown> }>('select type, settings from destinations where account_id = $1', [tenant.accountId]);
    const status = async () => json(await on.app.inject({ method: 'GET', url: `/v1/handoffs/${handoff.id}`, headers: tenant.auth })).status as string;
    const test = async () => {
      const [row] = await on.db.query<{ id: string }>('select id from destinations where account_id = $1', [tenant.accountId]);
      return json(await on.app.inject({ method: 'POST', url: `/v1/destinations/${row!.id}/test`, headers: tenant.auth }));
    };
    return { handoff, submit, stored, status, test };
  }

  it('refuses Microsoft customer and account ids the signed-in user may not use, on both fields, and stores nothing', async () => {
    const { submit, stored, status, test } = await signedIn(svc, 'microsoft-ads');
    const refused = await submit({ customer_id: '111', account_id: '222' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Please correct the fields marked below');
    expect(refused.body).toContain('Microsoft Advertising refused these ids: The signed-in Microsoft Advertising user may not use this account (UserIsNotAuthorized).');
    // Said once, under the first field; the second points to it.
    expect(refused.body.split('refused these ids')).toHaveLength(2);
    expect(refused.body).toContain('Refused together with the Customer ID above.');
    expect(refused.body).toMatch(/id="customer_id"[^>]*aria-invalid="true"/);
    expect(refused.body).toMatch(/id="account_id"[^>]*aria-invalid="true"/);
    // The ids typed stay in the form to correct; the fake's values are offered beside them.
    expect(refused.body).toMatch(/id="account_id" name="account_id" value="222"/);
    expect(refused.body).toContain(`<pre id="account_id-fake-value">${DEMO_FORM_VALUES['microsoft-ads'].account_id}</pre>`);
    expect(await stored()).toEqual([]);
    expect(await status()).toBe('pending');

    // The same handoff connects with the right ids.
    const done = await submit(DEMO_FORM_VALUES['microsoft-ads']);
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Microsoft Advertising account 987654321 (customer 123456789) is connected');
    expect(await stored()).toEqual([{ type: 'microsoft-ads', settings: { customer_id: '123456789', account_id: '987654321' } }]);
    expect(await status()).toBe('completed');
    // What was stored works (the grant, with any refresh token Microsoft rotated during the check).
    expect(await test()).toMatchObject({ ok: true });
    // The API's test answer says why, without the hosted page's field list.
    await svc.db.query(`update destinations set settings = '{"customer_id":"111","account_id":"222"}' where type = 'microsoft-ads'`);
    const tested = await test();
    expect(tested).toMatchObject({ ok: false, error: { code: 'not_authorized' } });
    expect(tested).not.toHaveProperty('refusedFields');
  });

  it('refuses a LinkedIn ad account the member has no role on, on its field, and stores nothing', async () => {
    const { submit, stored, status } = await signedIn(svc, 'linkedin');
    const refused = await submit({ ad_account_id: '123' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('LinkedIn refused this id: The LinkedIn member has no role on ad account 123.');
    expect(refused.body).toMatch(/id="ad_account_id"[^>]*aria-invalid="true"/);
    expect(await stored()).toEqual([]);
    expect(await status()).toBe('pending');
    expect((await submit(DEMO_FORM_VALUES.linkedin)).statusCode).toBe(200);
    expect(await stored()).toHaveLength(1);
  });

  it('connects as before when the platform cannot be reached to check the ids', async () => {
    for (const [type, form] of [['microsoft-ads', { customer_id: '111', account_id: '222' }], ['linkedin', { ad_account_id: '123' }]] as const) {
      const { submit, stored, status } = await signedIn(unreachable, type);
      const done = await submit(form);
      expect(done.statusCode).toBe(200);
      expect(await stored()).toHaveLength(1);
      expect(await status()).toBe('completed');
    }
  });
});
