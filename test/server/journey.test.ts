import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { createCnvClient } from '../../src/client';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { connectGoogleAds, googleSettings } from './support/google-connection';

describe("the spec's typical path, through the API, the hosted pages and the signed webhook", () => {
  let svc: RestService;
  let google: FakeGoogle;
  let base: string;
  beforeAll(async () => {
    google = await startFakeGoogle();
    svc = await createRestService(DATABASE_KINDS[0]!, googleSettings(google));
    base = await svc.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await svc.close();
    await google.close();
  });

  const api = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${svc.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** Opens a hosted url as a browser would (the test's public URL is not this listener, so take its path). */
  const submitHosted = async (url: string, form: Record<string, string> = {}) => {
    const res = await fetch(`${base}${new URL(url).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, html: await res.text() };
  };

  it('lists sites, connects Google Ads and the API trigger, publishes a flow, reports a signup and reads the event', async () => {
    const sites = await api('GET', '/v1/sites');
    const site = sites.body.data[0];

    const ads = await api('POST', '/v1/handoffs', { purpose: 'connect_destination', destination_type: 'google-ads' });
    const connected = await connectGoogleAds((path, init) => fetch(`${base}${path}`, init), ads.body.url, { customer_id: '123-456-7890' });
    expect(connected.status).toBe(200);
    expect((await api('GET', `/v1/handoffs/${ads.body.id}`)).body.status).toBe('completed');

    const trigger = await api('POST', '/v1/handoffs', { purpose: 'connect_trigger_source' });
    const page = await submitHosted(trigger.body.url);
    const secret = /whsec_[A-Za-z0-9]{32}/.exec(page.html)![0];
    expect((await api('GET', `/v1/handoffs/${trigger.body.id}`)).body.status).toBe('completed');

    const flow = await api('POST', '/v1/flows', {
      site_id: site.id, name: 'Signups', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }],
    });
    expect(flow.status).toBe(201);
    const published = await api('POST', `/v1/flows/${flow.body.id}/publish`);
    expect(published.body.status).toBe('live');

    const client = createCnvClient({ webhookBaseUrl: base, siteKey: site.site_key, triggerKey: 'signup', secret, maxAttempts: 1 });
    const result = await client.reportSignup({ correlationToken: null, allowUncorrelated: true, customerEventId: 'user_42', email: 'New.User@Example.com' });
    expect(result).toMatchObject({ ok: true });

    const events = await api('GET', `/v1/events?email=${encodeURIComponent('new.user@example.com')}`);
    expect(events.body.data).toHaveLength(1);
    const [event] = events.body.data;
    expect(event).toMatchObject({
      site_key: site.site_key, flow_id: flow.body.id, flow_name: 'Signups', customer_event_id: 'user_42',
      actions: [expect.objectContaining({ destination: 'google-ads', conversion_id: '987654321' })],
    });
    expect((await api('GET', `/v1/events/${event.id}`)).body.id).toBe(event.id);

    // The worker delivers it to the Data Manager API with the hashed email.
    const quiet = { info() {}, warn() {}, error() {} };
    const worker = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: quiet, autoStart: false });
    expect(await worker.drain()).toEqual([expect.objectContaining({ result: 'delivered' })]);
    await worker.stop();
    const [ingested] = google.ingested();
    expect(ingested!.destination).toMatchObject({ operatingAccountId: '1234567890', productDestinationId: '987654321' });
    expect((await api('GET', `/v1/events/${event.id}`)).body).toMatchObject({ status: 'completed', actions: [expect.objectContaining({ status: 'delivered' })] });
  });
});
