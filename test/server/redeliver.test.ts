/**
 * POST /v1/events/{id}/redeliver: after the cause of a failure is fixed, the failed actions go again (with the same
 * dedup ids) and the event is delivered; 409 when nothing of the event failed; 404 for an event of another account.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService } from './support/rest-harness';
import { googleSettings } from './support/google-connection';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { insertReportedEvent, memoryLog, steppableClock } from './delivery/fixtures';

describe.each(DATABASE_KINDS)('redelivering a failed event on $name', (kind) => {
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
});
