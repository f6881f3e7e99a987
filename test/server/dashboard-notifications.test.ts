/**
 * The dashboard's notifications page (its own file): add an endpoint (secret shown once), see attempts, remove it; the
 * redeliver button; and the Google Ads connection test that names a conversion action (offered from the live flows).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createTestService, type TestService } from './support/harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { enqueueNotification, startNotificationWorker } from '../../src/server/notifications';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { insertReportedEvent, memoryLog, steppableClock } from './delivery/fixtures';
import { LOCAL_RECEIVERS, startReceiver, type Receiver } from './support/receiver';
import { startFakeGoogle } from '../../src/demo/fakes/google';
import { googleSettings } from './support/google-connection';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { insertFlow } from '../../src/server/api/flows/sql';
import { pressSignIn } from './support/dashboard-sign-in';

let svc: TestService;
let receiver: Receiver;
beforeEach(async () => {
  [svc, receiver] = await Promise.all([createTestService({ CNV_PUBLIC_URL: 'http://cnv.test', ...LOCAL_RECEIVERS }), startReceiver()]);
});
afterEach(async () => {
  await Promise.all([svc.close(), receiver.close()]);
});

async function browser() {
  const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
  const res = await pressSignIn(svc.app, link.url);
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  const page = await svc.app.inject({ method: 'GET', url: '/', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return {
    get: (url: string) => svc.app.inject({ method: 'GET', url, headers: { cookie } }),
    post: (url: string, form: Record<string, string>): Promise<LightMyRequestResponse> =>
      svc.app.inject({ method: 'POST', url, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ ...form, _csrf: csrf }).toString() }),
  };
}

describe('the dashboard: notifications and redelivery', () => {
  it('adds an endpoint showing its secret once, lists every attempt, and removes it', async () => {
    const b = await browser();
    const empty = await b.get('/dashboard/notifications');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('No endpoints');
    const refused = await b.post('/dashboard/notifications', { url: 'http://hooks.example.com/x', 'kind:event.failed': '1' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('The URL must use https');
    const added = await b.post('/dashboard/notifications', { url: receiver.url, 'kind:event.failed': '1' });
    expect(added.statusCode).toBe(200);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(added.body)?.[0];
    expect(secret).toBeTruthy();
    expect(added.body).toContain('shown only this once');
    const later = await b.get('/dashboard/notifications');
    expect(later.body).toContain(receiver.url);
    expect(later.body).not.toContain(secret!);

    await enqueueNotification(svc.db, svc.accountId, 'event.failed', { site_id: svc.site.id, event_id: 'evt_x', reason: 'test' });
    receiver.answers.push(500);
    const w = startNotificationWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), autoStart: false });
    await w.drain();
    await w.stop();
    const shown = await b.get('/dashboard/notifications');
    expect(shown.body).toContain('HTTP 500');
    expect(shown.body).toContain('event.failed');

    const id = /id="(nep_[A-Za-z0-9]+)"/.exec(shown.body)![1]!;
    const removed = await b.post(`/dashboard/notifications/${id}/delete`, {});
    expect(removed.statusCode).toBe(303);
    expect((await b.get('/dashboard/notifications')).body).toContain('No endpoints');
  });

  it('offers "Send failed deliveries again" on a failed event, and queues it again', async () => {
    const b = await browser();
    const { eventId } = await insertReportedEvent(svc.db, { accountId: svc.accountId, site: svc.site });
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: steppableClock(new Date(Date.now() + 60_000)).now, autoStart: false });
    await delivery.drain();
    await delivery.stop();
    const page = await b.get(`/dashboard/events/${eventId}`);
    expect(page.body).toContain('Send failed deliveries again');
    expect(page.body).toContain('<a href="/dashboard/destinations">Destinations</a> sends all of a platform');
    const res = await b.post(`/dashboard/events/${eventId}/redeliver`, {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/dashboard/events/${eventId}?done=event_redelivered`);
    const after = await b.get(res.headers.location as string);
    expect(after.body).toContain('queued again');
    expect(after.body).not.toContain('Send failed deliveries again');
  });

  it('tests a Google Ads connection against a conversion action of a live flow, offered on the page', async () => {
    const google = await startFakeGoogle();
    const local = await createTestService({ CNV_PUBLIC_URL: 'http://cnv.test', ...LOCAL_RECEIVERS, ...googleSettings(google) });
    try {
      const destination = await upsertDestination(local.db, local.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
        sealCredentials(serviceSecretBox(local.settings), { refresh_token: google.issueRefreshToken() }));
      const flow = await insertFlow(local.db, local.accountId, local.site.id, {
        name: 'Signups', triggerConfig: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
        actionsConfig: [{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }], triggerKey: 'signup',
      });
      await local.db.query(`update flows set status = 'live' where id = $1`, [flow.id]);
      const link = await issueSignInLink(local.db, local.settings, local.accountId);
      const signed = await pressSignIn(local.app, link.url);
      const cookie = String(signed.headers['set-cookie']).split(';')[0]!;
      const page = await local.app.inject({ method: 'GET', url: '/dashboard/destinations', headers: { cookie } });
      expect(page.body).toMatch(/name="conversion_id"[^>]*value="987654321"/);
      expect(page.body).toContain('<option value="987654321">');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      const tested = await local.app.inject({
        method: 'POST', url: `/dashboard/destinations/${destination.id}/test`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: csrf, conversion_id: '987654321' }).toString(),
      });
      expect(tested.statusCode).toBe(303);
      const result = await local.app.inject({ method: 'GET', url: String(tested.headers.location), headers: { cookie } });
      expect(result.body).toContain('the connection works');
      const validate = google.server.requests.filter((r) => r.path === '/v1/events:ingest').at(-1)!;
      expect(validate.body).toMatchObject({ validateOnly: true, destinations: [{ productDestinationId: '987654321' }] });
    } finally {
      await local.close();
      await google.close();
    }
  });
});
