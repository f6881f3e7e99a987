/**
 * POST /v1/events/{id}/redeliver: after the cause of a failure is fixed, the failed actions go again (with the same
 * dedup ids) and the event is delivered; 409 when nothing of the event failed; 404 for an event of another account.
 * POST /v1/destinations/{id}/redeliver: after the user fixed what a whole destination refused, every failed delivery
 * to it goes again, oldest first, at most `limit` events a call; another destination's failures, an erased person's
 * events and another account's stay as they are.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService, type Tenant } from './support/rest-harness';
import { googleSettings } from './support/google-connection';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { insertReportedEvent, memoryLog, steppableClock } from './delivery/fixtures';
import { insertSite } from '../../src/server/api/sites/sql';

const BOTH = [{ destination: 'google-ads', conversionId: '987654321' }, { destination: 'meta', conversionId: null }];

describe.each(DATABASE_KINDS)('redelivering failed deliveries on $name', (kind) => {
  let svc: RestService;
  let google: FakeGoogle;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    google = await startFakeGoogle();
    svc = await createRestService(kind, googleSettings(google));
  });
  afterAll(async () => {
    await svc.close();
    await google.close();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  it('sends the failed action again once the cause is fixed, and answers 409 once nothing failed', async () => {
    const tenant = await svc.addTenant('Redeliver');
    const { eventId, customerEventId } = await insertReportedEvent(svc.db, { accountId: tenant.accountId, site: tenant.site });
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false });
    workers.push(delivery);
    await delivery.drain();
    const url = `/v1/events/${eventId}/redeliver`;
    let event = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${eventId}`, headers: tenant.auth }));
    expect(event).toMatchObject({ status: 'failed', actions: [{ status: 'failed', error: { code: 'destination_not_connected' } }] });

    // The cause fixed: Google Ads connected.
    await upsertDestination(svc.db, tenant.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
      sealCredentials(serviceSecretBox(svc.settings), { refresh_token: google.issueRefreshToken() }));
    const redelivered = await svc.app.inject({ method: 'POST', url, headers: tenant.auth });
    expect(redelivered.statusCode).toBe(200);
    expect(json(redelivered)).toMatchObject({ id: eventId, status: 'queued', actions: [{ status: 'queued', attempts: 0, error: null }] });
    clock.advance(1000);
    await delivery.drain();
    event = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${eventId}`, headers: tenant.auth }));
    expect(event).toMatchObject({ status: 'completed', actions: [{ status: 'delivered' }] });
    const sent = google.server.requests.filter((r) => r.path === '/v1/events:ingest').at(-1)!;
    expect(sent.problems).toEqual([]);
    expect(sent.body.events[0].adIdentifiers).toEqual({ gclid: 'Cj0KCQtestGCLID' });
    expect(customerEventId).toBeTruthy();

    const again = await svc.app.inject({ method: 'POST', url, headers: tenant.auth });
    expect(again.statusCode).toBe(409);
    expect(errorOf(again)).toMatchObject({ type: 'conflict_error', code: 'nothing_to_redeliver' });
    // An event of another account is not found, never redelivered.
    const other = await svc.addTenant('Other');
    const foreign = await svc.app.inject({ method: 'POST', url, headers: other.auth });
    expect(foreign.statusCode).toBe(404);
    expect((await svc.app.inject({ method: 'POST', url: '/v1/events/evt_nope/redeliver', headers: tenant.auth, payload: {} })).statusCode).toBe(404);
  });

  // POST /v1/destinations/{id}/redeliver: every failed delivery of one destination, after one cause failed many.
  /** A delivery worker on a clock a minute ahead (pairing windows closed), drained on demand. */
  const worker = () => {
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false });
    workers.push(delivery);
    return { drain: async () => (clock.advance(1000), delivery.drain()) };
  };
  /** Events whose Google Ads and Meta deliveries failed (neither platform was connected when they were sent). */
  const failedEvents = async (tenant: Tenant, count: number, site = tenant.site) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push((await insertReportedEvent(svc.db, { accountId: tenant.accountId, site }, { actions: BOTH, occurredAt: new Date(Date.UTC(2026, 10, 1 + i)) })).eventId);
    }
    await worker().drain();
    return ids;
  };
  const connectGoogle = async (tenant: Tenant) => {
    await upsertDestination(svc.db, tenant.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
      sealCredentials(serviceSecretBox(svc.settings), { refresh_token: google.issueRefreshToken() }));
    const list = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: tenant.auth }));
    return (list.data as Array<{ id: string; type: string }>).find((d) => d.type === 'google-ads')!.id;
  };
  const redeliver = (tenant: Tenant, destinationId: string, payload?: unknown) =>
    svc.app.inject({ method: 'POST', url: `/v1/destinations/${destinationId}/redeliver`, headers: tenant.auth, ...(payload === undefined ? {} : { payload: payload as object }) });
  const actionsOf = async (tenant: Tenant, eventId: string) =>
    json(await svc.app.inject({ method: 'GET', url: `/v1/events/${eventId}`, headers: tenant.auth })) as { status: string; actions: Array<{ destination: string; status: string }> };

  it("sends every failed delivery of the destination again, and only that destination's", async () => {
    const tenant = await svc.addTenant('Bulk redelivery');
    const events = await failedEvents(tenant, 3);
    expect(await actionsOf(tenant, events[0]!)).toMatchObject({ status: 'failed', actions: [{ destination: 'google-ads', status: 'failed' }, { destination: 'meta', status: 'failed' }] });
    const destinationId = await connectGoogle(tenant);
    const before = google.server.requests.filter((r) => r.path === '/v1/events:ingest').length;

    const res = await redeliver(tenant, destinationId);
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ destination: destinationId, events: 3, actions: 3, has_more: false });
    expect(await actionsOf(tenant, events[0]!)).toMatchObject({ status: 'queued', actions: [{ status: 'queued' }, { status: 'failed' }] });
    await worker().drain();
    for (const id of events) {
      // Google's delivered; Meta's, not connected, still failed: the event stays failed.
      expect(await actionsOf(tenant, id)).toMatchObject({ status: 'failed', actions: [{ destination: 'google-ads', status: 'delivered' }, { destination: 'meta', status: 'failed' }] });
    }
    const sent = google.server.requests.filter((r) => r.path === '/v1/events:ingest').slice(before);
    expect(sent.flatMap((r) => r.problems)).toEqual([]);
    expect(sent.reduce((n, r) => n + (r.body.events as unknown[]).length, 0)).toBe(3);

    // Nothing failed any more: a 200 that queued nothing, as an erasure that found no one.
    expect(json(await redeliver(tenant, destinationId, {}))).toEqual({ destination: destinationId, events: 0, actions: 0, has_more: false });
  });

  it('takes the oldest events first, limit at a time, and filters by site, flow and time', async () => {
    const tenant = await svc.addTenant('Limited redelivery');
    const otherSite = await insertSite(svc.db, tenant.accountId);
    const events = await failedEvents(tenant, 3);
    const elsewhere = await failedEvents(tenant, 1, otherSite);
    const destinationId = await connectGoogle(tenant);

    expect(json(await redeliver(tenant, destinationId, { site_id: tenant.site.id, occurred_after: '2026-11-02T00:00:00Z', limit: 1 })))
      .toMatchObject({ events: 1, actions: 1, has_more: true });
    expect((await actionsOf(tenant, events[0]!)).actions[0]!.status).toBe('failed'); // before occurred_after
    expect((await actionsOf(tenant, events[1]!)).actions[0]!.status).toBe('queued'); // the oldest that matched
    expect(json(await redeliver(tenant, destinationId, { site_id: tenant.site.id, occurred_after: '2026-11-02T00:00:00Z', limit: 1 })))
      .toMatchObject({ events: 1, actions: 1, has_more: false });
    expect((await actionsOf(tenant, events[2]!)).actions[0]!.status).toBe('queued');
    expect((await actionsOf(tenant, elsewhere[0]!)).actions[0]!.status).toBe('failed'); // another site
    // insertReportedEvent's events belong to no flow: a flow filter of the account's finds none of them.
    const flow = json(await svc.app.inject({
      method: 'POST', url: '/v1/flows', headers: tenant.auth,
      payload: { site_id: tenant.site.id, name: 'Other', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' }, actions_config: [{ integrationId: 'meta', config: {} }] },
    }));
    expect(json(await redeliver(tenant, destinationId, { flow_id: flow.id }))).toMatchObject({ events: 0, actions: 0 });
    expect(json(await redeliver(tenant, destinationId))).toMatchObject({ events: 2, actions: 2, has_more: false });
  });

  it("leaves an erased person's events alone", async () => {
    const tenant = await svc.addTenant('Erased redelivery');
    const [kept, erased] = await failedEvents(tenant, 2);
    await svc.db.query(`update events set erased_at = now(), data = data || '{"erased": true}'::jsonb where id = $1`, [erased]);
    const destinationId = await connectGoogle(tenant);
    expect(json(await redeliver(tenant, destinationId))).toMatchObject({ events: 1, actions: 1 });
    expect((await actionsOf(tenant, kept!)).actions[0]!.status).toBe('queued');
    const [action] = await svc.db.query<{ status: string }>(`select status from event_actions where event_id = $1 and destination = 'google-ads'`, [erased]);
    expect(action!.status).toBe('failed');
  });

  it('answers 404 for a destination, site or flow not of the account, and 400 for a body it cannot read', async () => {
    const tenant = await svc.addTenant('Refused redelivery');
    const other = await svc.addTenant('Someone else');
    const destinationId = await connectGoogle(tenant);
    const foreign = await redeliver(other, destinationId);
    expect(foreign.statusCode).toBe(404);
    expect(errorOf(foreign)).toMatchObject({ type: 'not_found_error', code: 'resource_missing' });
    expect((await redeliver(tenant, 'dst_nope')).statusCode).toBe(404);
    expect(errorOf(await redeliver(tenant, destinationId, { site_id: other.site.id }))).toMatchObject({ code: 'resource_missing', param: 'site_id' });
    expect(errorOf(await redeliver(tenant, destinationId, { flow_id: 'flow_nope' }))).toMatchObject({ code: 'resource_missing', param: 'flow_id' });
    for (const body of [{ limit: 0 }, { limit: 1001 }, { limit: 'ten' }, { occurred_after: 'yesterday' }, { colour: 'red' }, [1]]) {
      const res = await redeliver(tenant, destinationId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(errorOf(res).type).toBe('invalid_request_error');
    }
  });
});
