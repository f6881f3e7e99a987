/**
 * The form trigger on the service: publishing a form-trigger flow checks its integration and page filter, the config
 * lists the live form triggers, and a form submission from the site's pages becomes one event per matching live flow
 * (trigger `form_submission`), once per submission_id, delivered to the flow's actions.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService } from './support/rest-harness';
import { configPath, SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { formSubmissionsPath, type FormSubmissionPayload } from '../../src/protocol/forms';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { googleSettings } from './support/google-connection';
import { secretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { newToken } from './support/fixtures';

const ORIGIN = 'https://www.example.com';
const KEY = '5'.repeat(64); // the harness's CNV_SECRET_KEY
const quiet = { info() {}, warn() {}, error() {} };

describe.each(DATABASE_KINDS)('form submissions on $name', (kind) => {
  let svc: RestService;
  let google: FakeGoogle;

  beforeAll(async () => {
    google = await startFakeGoogle();
    svc = await createRestService(kind, googleSettings(google));
    await svc.app.inject({ method: 'PATCH', url: `/v1/sites/${svc.site.id}`, headers: svc.auth, payload: { domain: 'https://example.com' } });
    const box = secretBox(Buffer.from(KEY, 'hex'));
    await upsertDestination(svc.db, svc.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
      sealCredentials(box, { refresh_token: google.issueRefreshToken() }));
  });
  afterAll(async () => {
    await svc.close();
    await google.close();
  });
  beforeEach(() => google.server.reset());

  const api = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    svc.app.inject({ method, url, headers: svc.auth, ...(payload === undefined ? {} : { payload: payload as object }) });
  const formFlow = async (trigger: Record<string, unknown>, name = 'Leads') => {
    const created = json(await api('POST', '/v1/flows', {
      site_id: svc.site.id, name, trigger_config: trigger,
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '555' } } }],
    }));
    return { id: created.id as string, publish: () => api('POST', `/v1/flows/${created.id}/publish`) };
  };
  const submission = (overrides: Partial<FormSubmissionPayload> = {}): FormSubmissionPayload => ({
    submission_id: newToken(),
    integration: 'gravity-forms',
    form_id: '3',
    occurred_at: new Date().toISOString(),
    page_url: 'https://www.example.com/contact',
    referrer: null,
    touch: { click_ids: { gclid: 'Cj0KCQformGCLID' }, utm: {}, landing_page_url: 'https://www.example.com/?gclid=Cj0KCQformGCLID', referrer: null, captured_at: new Date().toISOString() },
    cookies: {},
    consent: { ad_user_data: 'granted', ad_personalization: null },
    fields: { email: 'Lead@Example.com', first_name: 'Ada' },
    ...overrides,
  });
  const post = (body: unknown, origin = ORIGIN) =>
    svc.app.inject({
      method: 'POST', url: formSubmissionsPath(svc.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin, 'user-agent': 'Mozilla/5.0 test' },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const eventsOf = async (flowId: string) => json(await api('GET', `/v1/events?flow_id=${flowId}`)).data as any[];

  it('refuses to publish a form trigger with an integration cnv does not detect or a page filter outside its grammar', async () => {
    const unknown = await formFlow({ integrationId: 'typo-forms', pageFilter: 'all' });
    const refused = await unknown.publish();
    expect(refused.statusCode).toBe(400);
    expect(JSON.stringify(refused.json())).toContain('trigger_config.integrationId');
    const badFilter = await formFlow({ integrationId: 'hubspot', pageFilter: 'signup' });
    const refusedFilter = await badFilter.publish();
    expect(refusedFilter.statusCode).toBe(400);
    expect(JSON.stringify(refusedFilter.json())).toContain('trigger_config.pageFilter');
  });

  it('lists the live form triggers in the loader config', async () => {
    const flow = await formFlow({ integrationId: 'gravity-forms', pageFilter: '/contact*' });
    expect((await flow.publish()).statusCode).toBe(200);
    const config = (await svc.app.inject({ method: 'GET', url: configPath(svc.site.site_key), headers: { origin: ORIGIN } })).json();
    expect(config.forms).toContainEqual({ integration: 'gravity-forms', page_filter: '/contact*' });
  });

  it('turns a submission into one event per matching live flow, delivered with the click id and the hashed email', async () => {
    const all = await formFlow({ integrationId: 'webflow', pageFilter: 'all' }, 'All pages');
    const pricing = await formFlow({ integrationId: 'webflow', pageFilter: '/pricing/*' }, 'Pricing only');
    await all.publish();
    await pricing.publish();
    const body = submission({ integration: 'webflow', page_url: 'https://www.example.com/contact?x=1' });
    const res = await post(body);
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);

    const [event] = await eventsOf(all.id);
    expect(event).toMatchObject({ trigger: 'form_submission', flow_name: 'All pages', match_quality: 'high', status: 'queued' });
    expect(await eventsOf(pricing.id)).toEqual([]);

    const worker = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: quiet, autoStart: false });
    await worker.drain();
    await worker.stop();
    const ingested = google.ingested().at(-1)!;
    expect(ingested.event.adIdentifiers).toEqual({ gclid: 'Cj0KCQformGCLID' });
    expect(ingested.event.userData.userIdentifiers).toHaveLength(1);
    expect(ingested.event.consent).toEqual({ adUserData: 'CONSENT_GRANTED' });
    expect(json(await api('GET', `/v1/events/${event.id}`))).toMatchObject({ status: 'completed' });
  });

  it('creates nothing for a repeated submission_id', async () => {
    const flow = await formFlow({ integrationId: 'contact-form-7', pageFilter: 'all' });
    await flow.publish();
    const body = submission({ integration: 'contact-form-7' });
    expect((await post(body)).statusCode).toBe(204);
    expect((await post(body)).statusCode).toBe(204);
    expect(await eventsOf(flow.id)).toHaveLength(1);
  });

  it('refuses a page of another origin, bad JSON, a body over 16 KB and hostile input with the error envelope, creating nothing', async () => {
    const flow = await formFlow({ integrationId: 'hubspot', pageFilter: 'all' });
    await flow.publish();
    expect((await post(submission({ integration: 'hubspot' }), 'https://evil.example')).statusCode).toBe(403);
    expect(errorOf(await post('{nope')).code).toBe('invalid_json');
    expect((await post(JSON.stringify({ ...submission({ integration: 'hubspot' }), pad: 'x'.repeat(17 * 1024) }))).statusCode).toBe(413);
    for (const bad of [
      { ...submission({ integration: 'hubspot' }), submission_id: 'short' },
      { ...submission({ integration: 'hubspot' }), integration: 'typo' },
      { ...submission({ integration: 'hubspot' }), page_url: 'javascript:alert(1)' },
      { ...submission({ integration: 'hubspot' }), fields: { email: 42 } },
      { ...submission({ integration: 'hubspot' }), occurred_at: 'yesterday' },
    ]) {
      const res = await post(bad);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res).param).toBeDefined();
    }
    const surrogate = `{"submission_id":"${newToken()}","integration":"hubspot","form_id":null,"occurred_at":"${new Date().toISOString()}","page_url":"https://www.example.com/","referrer":null,"touch":null,"cookies":{},"consent":{},"fields":{"email":"a\\ud800@example.com"}}`;
    expect((await post(surrogate)).statusCode).toBe(204); // the damaged field is dropped, the lead kept
    expect(await eventsOf(flow.id)).toHaveLength(1);
    expect((await svc.app.inject({ method: 'POST', url: '/collect/v1/sites/%00/form-submissions', headers: { origin: ORIGIN }, payload: '{}' })).statusCode).toBe(400);
  });
});
