/** The dashboard's notifications page (its own file): add an endpoint (secret shown once), see attempts, remove it; and the redeliver button. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createTestService, type TestService } from './support/harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { enqueueNotification, startNotificationWorker } from '../../src/server/notifications';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { insertReportedEvent, memoryLog, steppableClock } from './delivery/fixtures';
import { startReceiver, type Receiver } from './support/receiver';

let svc: TestService;
let receiver: Receiver;
beforeEach(async () => {
  [svc, receiver] = await Promise.all([createTestService({ CNV_PUBLIC_URL: 'http://cnv.test' }), startReceiver()]);
});
afterEach(async () => {
  await Promise.all([svc.close(), receiver.close()]);
});

async function browser() {
  const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
  const res = await svc.app.inject({ method: 'GET', url: new URL(link.url).pathname + new URL(link.url).search });
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
    expect(refused.body).toContain('url must use https');
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
    const res = await b.post(`/dashboard/events/${eventId}/redeliver`, {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/dashboard/events/${eventId}?done=event_redelivered`);
    const after = await b.get(res.headers.location as string);
    expect(after.body).toContain('queued again');
    expect(after.body).not.toContain('Send failed deliveries again');
  });
});
