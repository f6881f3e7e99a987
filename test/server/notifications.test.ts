/**
 * Outbound notifications: endpoints through REST (the secret shown once), Standard Webhooks signatures that the
 * `standardwebhooks` package verifies, the three kinds end to end against the fake Google (a refused grant, a new
 * handoff, a failure for good), retries on the schedule, redirects never followed, and loopback-only plain http.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService, type Tenant } from './support/rest-harness';
import { connectGoogleAds, googleSettings } from './support/google-connection';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { startNotificationWorker } from '../../src/server/notifications';
import { insertReportedEvent, memoryLog, steppableClock } from './delivery/fixtures';
import { LOCAL_RECEIVERS, startReceiver, type Receiver } from './support/receiver';

describe.each(DATABASE_KINDS)('outbound notifications on $name', (kind) => {
  let svc: RestService;
  let google: FakeGoogle;
  let receiver: Receiver;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [google, receiver] = await Promise.all([startFakeGoogle(), startReceiver()]);
    svc = await createRestService(kind, { ...LOCAL_RECEIVERS, ...googleSettings(google) });
  });
  afterAll(async () => {
    await svc.close();
    await Promise.all([google.close(), receiver.close()]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    receiver.answers.length = 0;
  });

  const post = (tenant: Tenant, url: string, payload?: object) =>
    svc.app.inject({ method: 'POST', url, headers: tenant.auth, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const notifier = (now?: () => Date) => {
    const w = startNotificationWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), autoStart: false, random: () => 0.5, timeoutMs: 10_000, ...(now ? { now } : {}) });
    workers.push(w);
    return w;
  };

  it('creates an endpoint with its whsec_ secret shown once, lists it like every list, and deletes it', async () => {
    const tenant = await svc.addTenant('Endpoints');
    const created = await post(tenant, '/v1/notification_endpoints', { url: 'https://hooks.example.com/cnv', kinds: ['event.failed'] });
    expect(created.statusCode).toBe(201);
    const body = json(created);
    expect(body).toEqual({ id: expect.stringMatching(/^nep_/), url: 'https://hooks.example.com/cnv', kinds: ['event.failed'], secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/), created_at: expect.any(String) });
    const read = json(await svc.app.inject({ method: 'GET', url: `/v1/notification_endpoints/${body.id}`, headers: tenant.auth }));
    expect(read).not.toHaveProperty('secret');
    await post(tenant, '/v1/notification_endpoints', { url: 'http://localhost:8080/hooks', kinds: ['destination.recovered'] });
    const page = json(await svc.app.inject({ method: 'GET', url: '/v1/notification_endpoints?limit=1', headers: tenant.auth }));
    expect(page).toMatchObject({ data: [{ id: body.id }], has_more: true, next_cursor: body.id });
    expect(JSON.stringify(page)).not.toContain(body.secret);
    const next = json(await svc.app.inject({ method: 'GET', url: `/v1/notification_endpoints?starting_after=${body.id}`, headers: tenant.auth }));
    expect(next).toMatchObject({ data: [{ url: 'http://localhost:8080/hooks' }], has_more: false, next_cursor: null });
    const gone = await svc.app.inject({ method: 'DELETE', url: `/v1/notification_endpoints/${body.id}`, headers: tenant.auth });
    expect(json(gone)).toEqual({ id: body.id, deleted: true });
    const again = await svc.app.inject({ method: 'DELETE', url: `/v1/notification_endpoints/${body.id}`, headers: tenant.auth });
    expect(again.statusCode).toBe(404);
    expect(errorOf(again).code).toBe('resource_missing');
    // Another account's endpoint is not found, never shown.
    const other = await svc.addTenant('Other');
    expect((await svc.app.inject({ method: 'GET', url: `/v1/notification_endpoints/${page.data[0].id}`, headers: other.auth })).statusCode).toBe(404);
  });

  it.each([
    [{ url: 'http://hooks.example.com/cnv', kinds: ['event.failed'] }, 'url'],
    [{ url: 'ftp://hooks.example.com/cnv', kinds: ['event.failed'] }, 'url'],
    [{ url: 'https://user:pw@hooks.example.com/cnv', kinds: ['event.failed'] }, 'url'],
    [{ url: 'https://hooks.example.com/cnv', kinds: ['event.sent'] }, 'kinds'],
    [{ url: 'https://hooks.example.com/cnv', kinds: [] }, 'kinds'],
    [{ url: 'https://hooks.example.com/cnv' }, 'kinds'],
    [undefined, undefined],
  ])('refuses %j with a 400 and the error envelope', async (payload, param) => {
    const res = await post(svc, '/v1/notification_endpoints', payload);
    expect(res.statusCode).toBe(400);
    const error = errorOf(res);
    expect(error.type).toBe('invalid_request_error');
    if (param) expect(error.param).toContain(param);
  });

  it('tells of a refused grant and of the new handoff, signed so a Standard Webhooks library verifies them; the waiting conversion is then delivered', async () => {
    const tenant = await svc.addTenant('Reauthorization');
    const endpoint = json(await post(tenant, '/v1/notification_endpoints', { url: receiver.url, kinds: ['destination.reauthorization_required', 'destination.recovered'] }));
    const fetchService = async (path: string, init?: RequestInit) => {
      const headers = { ...(init?.headers as Record<string, string> | undefined), ...(init?.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) };
      const res = await svc.app.inject({ method: (init?.method ?? 'GET') as 'GET', url: path, headers, ...(init?.body ? { payload: String(init.body) } : {}) });
      return new Response(res.statusCode === 204 ? null : res.body, { status: res.statusCode, headers: res.headers as Record<string, string> });
    };
    const connectOnce = async () => {
      const handoff = json(await post(tenant, '/v1/handoffs', { purpose: 'connect_destination', destination_type: 'google-ads' }));
      const done = await connectGoogleAds(fetchService, handoff.url, { customer_id: '123-456-7890' });
      expect(done.status).toBe(200);
    };
    await connectOnce();
    const { eventId } = await insertReportedEvent(svc.db, { accountId: tenant.accountId, site: tenant.site });
    google.revokeRefreshTokens();
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5 });
    workers.push(delivery);
    await delivery.drain();
    const before = receiver.received.length;
    expect(await notifier().drain()).toBe(1);
    const webhook = new Webhook(endpoint.secret);
    const first = receiver.received[before]!;
    const payload = webhook.verify(first.body, first.headers as Record<string, string>) as Record<string, any>;
    const [destination] = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: tenant.auth })).data;
    expect(destination.status).toBe('reauthorization_required');
    expect(payload).toEqual({
      type: 'destination.reauthorization_required',
      timestamp: expect.any(String),
      data: { site_id: null, destination: { id: destination.id, type: 'google-ads' }, reason: expect.stringContaining('nothing is lost') },
    });
    expect(first.headers['webhook-id']).toMatch(/^msg_/);
    // The same refusal seen again tells nobody twice.
    clock.advance(60 * 60_000);
    await delivery.drain();
    expect(await notifier().drain()).toBe(0);

    await connectOnce();
    expect(await notifier().drain()).toBe(1);
    const second = receiver.received.at(-1)!;
    expect(webhook.verify(second.body, second.headers as Record<string, string>)).toMatchObject({
      type: 'destination.recovered',
      data: { destination: { id: destination.id, type: 'google-ads' } },
    });
    expect(second.headers['webhook-id']).not.toBe(first.headers['webhook-id']);
    clock.advance(1000);
    await delivery.drain();
    const event = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${eventId}`, headers: tenant.auth }));
    expect(event.status).toBe('completed');
  });

  it('tells event.failed once an action failed for good, and retries a receiver that fails twice until it answers, delivering it once', async () => {
    const tenant = await svc.addTenant('Failures');
    const endpoint = json(await post(tenant, '/v1/notification_endpoints', { url: receiver.url, kinds: ['event.failed'] }));
    // An event for Google Ads in an account that never connected it: the action fails for good before any send.
    const { eventId } = await insertReportedEvent(svc.db, { accountId: tenant.accountId, site: tenant.site }, { actions: [{ destination: 'google-ads', conversionId: null }] });
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false });
    workers.push(delivery);
    await delivery.drain();
    receiver.answers.push(500, 503);
    const before = receiver.received.length;
    const at = steppableClock();
    const w = notifier(at.now);
    expect(await w.drain()).toBe(1); // 500
    expect(await w.drain()).toBe(0); // not yet due: the next try is 5 s (±20 %) later
    at.advance(6_000);
    expect(await w.drain()).toBe(1); // 503
    at.advance(4 * 60_000);
    expect(await w.drain()).toBe(0); // 5 min (±20 %): not yet
    at.advance(2 * 60_000);
    expect(await w.drain()).toBe(1); // answered
    at.advance(24 * 3_600_000);
    expect(await w.drain()).toBe(0); // delivered: never sent again
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1); // one message, retried
    const last = got.at(-1)!;
    const payload = JSON.parse(last.body);
    expect(payload).toEqual({
      type: 'event.failed',
      timestamp: expect.any(String),
      data: { site_id: tenant.site.id, event_id: eventId, destination: { id: null, type: 'google-ads' }, reason: expect.stringContaining('No Google Ads account is connected') },
    });
    // The signature is over this body with this message's own timestamp.
    const realNow = new Webhook(endpoint.secret);
    expect(() => realNow.verify(last.body, { ...(last.headers as Record<string, string>), 'webhook-signature': 'v1,AAAA' })).toThrow();
    const rows = await svc.db.query<{ status: string; attempts: number }>('select status, attempts from notifications where account_id = $1', [tenant.accountId]);
    expect(rows).toEqual([{ status: 'delivered', attempts: 3 }]);
  });

  /** An event.failed notification queued for the receiver: an endpoint, and an action failed for good (no conversion action). */
  async function queueEventFailed(tenant: Tenant): Promise<void> {
    await post(tenant, '/v1/notification_endpoints', { url: receiver.url, kinds: ['event.failed'] });
    await insertReportedEvent(svc.db, { accountId: tenant.accountId, site: tenant.site }, { actions: [{ destination: 'google-ads', conversionId: null }] });
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: steppableClock(new Date(Date.now() + 60_000)).now, autoStart: false });
    workers.push(delivery);
    await delivery.drain();
  }

  it('lets a message in flight when the worker stops end and records it: delivered once, not sent again', async () => {
    const tenant = await svc.addTenant('Stopping');
    await queueEventFailed(tenant);
    const before = receiver.received.length;
    const release = receiver.holdAnswers();
    const w = notifier();
    const sending = w.drain();
    while (receiver.received.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    const stopped = w.stop();
    release(); // the endpoint answers while the worker stops
    await Promise.all([stopped, sending]);
    const [row] = await svc.db.query<{ status: string; attempts: number }>('select status, attempts from notifications where account_id = $1', [tenant.accountId]);
    expect(row).toEqual({ status: 'delivered', attempts: 1 });
    expect(receiver.received.length).toBe(before + 1);
  });

  it('never follows a redirect: a 3xx is a failed attempt and the redirect target is never asked', async () => {
    const tenant = await svc.addTenant('Redirect');
    await queueEventFailed(tenant);
    receiver.answers.push(307);
    const before = receiver.received.length;
    expect(await notifier().drain()).toBe(1);
    expect(receiver.received.slice(before).map((r) => r.path)).toEqual(['/hooks/cnv']);
    const [row] = await svc.db.query<{ status: string; attempts: number }>('select status, attempts from notifications where account_id = $1', [tenant.accountId]);
    expect(row).toEqual({ status: 'pending', attempts: 1 });
    const [attempt] = await svc.db.query<{ status: number; error: string }>(
      'select a.status, a.error from notification_attempts a join notifications n on n.id = a.notification_id where n.account_id = $1',
      [tenant.accountId],
    );
    expect(attempt).toEqual({ status: 307, error: expect.stringContaining('redirects are not followed') });
  });
});
