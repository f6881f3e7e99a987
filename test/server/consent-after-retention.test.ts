/**
 * A visitor's consent outlives the browser snapshot that carried it. Delivery read `ad_user_data` only from the
 * snapshot (or the form submission), which the snapshot retention deletes after CNV_SNAPSHOT_RETENTION_DAYS (30 by
 * default). A conversion sent after that (one that waited for a platform to be reconnected, or failed and was sent again
 * after a fix) went out as if the visitor had never answered: with the hashed email, phone and names of a visitor who
 * had denied ad_user_data. The consent is now kept on the event when it is paired, as its click ids are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { connectGoogleAds, googleSettings } from './support/google-connection';
import { connectApiTrigger, insertApiFlow, insertFormFlow, newToken, setSiteDomain, signedReport, snapshotBody } from './support/fixtures';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { purgeExpiredSnapshots } from '../../src/server/collector/retention';
import { snapshotsPath, SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { formSubmissionsPath } from '../../src/protocol/forms';
import { memoryLog, steppableClock } from './delivery/fixtures';
import { MIGRATIONS } from '../../src/server/db/migrations';
import { conversionPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';

const ORIGIN = 'https://www.example.com';
const SECRET = 'whsec_consent_retention_0123456789';
const DAY = 86_400_000;

describe.each(DATABASE_KINDS)('consent after the snapshot retention on $name', (kind) => {
  let svc: RestService;
  let google: FakeGoogle;
  beforeAll(async () => {
    google = await startFakeGoogle();
    svc = await createRestService(kind, googleSettings(google));
  });
  afterAll(async () => {
    await svc.close();
    await google.close();
  });

  const fetchService = async (path: string, init?: RequestInit) => {
    const headers = { ...(init?.headers as Record<string, string> | undefined), ...(init?.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) };
    const res = await svc.app.inject({ method: (init?.method ?? 'GET') as 'GET', url: path, headers, ...(init?.body ? { payload: String(init.body) } : {}) });
    return new Response(res.statusCode === 204 ? null : res.body, { status: res.statusCode, headers: res.headers as Record<string, string> });
  };

  it('a denied ad_user_data still holds back the identifiers of a conversion sent after its snapshot was purged', async () => {
    const tenant = await svc.addTenant('Consent kept');
    const connect = async () => {
      const handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: tenant.auth, payload: { purpose: 'connect_destination', destination_type: 'google-ads' } }));
      expect((await connectGoogleAds(fetchService, handoff.url, { customer_id: '123-456-7890' })).status).toBe(200);
    };
    await connect();
    await setSiteDomain(svc.db, tenant.site.id, ORIGIN);
    await connectApiTrigger(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, { triggerKey: 'signup' });
    await insertFormFlow(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, 'html');

    // A visitor who denied ad_user_data clicks an ad and signs up; another sends a form.
    const token = newToken();
    const now = new Date();
    const snapshot = await svc.app.inject({
      method: 'POST',
      url: snapshotsPath(tenant.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN },
      payload: JSON.stringify({ ...snapshotBody({ correlation_token: token, occurred_at: now.toISOString() }), consent: { ad_user_data: 'denied', ad_personalization: 'denied' } }),
    });
    expect(snapshot.statusCode).toBe(204);
    const report = await svc.app.inject(signedReport(tenant.site.site_key, 'signup', { customer_event_id: 'signup-denied', correlation_token: token, email: 'denied@example.com', phone: '+1 800 555 0199' }, SECRET));
    expect(report.statusCode).toBe(200);
    const form = await svc.app.inject({
      method: 'POST',
      url: formSubmissionsPath(tenant.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN },
      payload: JSON.stringify({
        submission_id: newToken(), integration: 'html', form_id: 'contact', occurred_at: now.toISOString(), page_url: `${ORIGIN}/contact`, referrer: null,
        touch: { click_ids: { gclid: 'Cj0KCQ-form-click' }, utm: {}, landing_page_url: `${ORIGIN}/?gclid=Cj0KCQ-form-click`, referrer: null, captured_at: now.toISOString() },
        cookies: {}, consent: { ad_user_data: 'denied', ad_personalization: 'denied' },
        fields: { email: 'form-denied@example.com', phone: null, first_name: 'Form', last_name: 'Denied' },
      }),
    });
    expect(form.statusCode).toBe(204);

    // Google refuses the grant: both conversions wait for a reconnect, which comes after the snapshot retention.
    google.revokeRefreshTokens();
    const clock = steppableClock(new Date(now.getTime() + 60_000));
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5 });
    try {
      await delivery.drain();
      const waiting = json(await svc.app.inject({ method: 'GET', url: '/v1/events', headers: tenant.auth })).data as Array<{ status: string; actions: Array<{ error: { code: string } | null }> }>;
      expect(waiting).toHaveLength(2);
      for (const event of waiting) expect(event).toMatchObject({ status: 'queued', actions: [{ error: { code: 'reauthorization_required' } }] });

      expect(await purgeExpiredSnapshots(svc.db, 30, new Date(now.getTime() + 31 * DAY))).toBe(2);
      const before = google.ingested().length;
      await connect();
      clock.advance(31 * DAY);
      google.setNow(clock.now());
      await delivery.drain();
      const sent = google.ingested().slice(before).map((i) => i.event);
      expect(sent).toHaveLength(2);
      for (const event of sent) {
        expect(event.userData).toBeUndefined();
        expect(event.consent).toMatchObject({ adUserData: 'CONSENT_DENIED' });
      }
    } finally {
      await delivery.stop();
    }
  });

  it("a later stage found through the customer id keeps its signup's denial once the signup's snapshot is gone", async () => {
    const tenant = await svc.addTenant('Stage consent');
    const handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: tenant.auth, payload: { purpose: 'connect_destination', destination_type: 'google-ads' } }));
    expect((await connectGoogleAds(fetchService, handoff.url, { customer_id: '123-456-7890' })).status).toBe(200);
    await setSiteDomain(svc.db, tenant.site.id, ORIGIN);
    await connectApiTrigger(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, { triggerKey: 'signup' });
    await insertApiFlow(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, { triggerKey: 'paid', triggerType: 'conversion' });
    const token = newToken();
    const now = new Date();
    await svc.app.inject({
      method: 'POST',
      url: snapshotsPath(tenant.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN },
      payload: JSON.stringify({ ...snapshotBody({ correlation_token: token, occurred_at: now.toISOString() }), consent: { ad_user_data: 'denied', ad_personalization: 'denied' } }),
    });
    const signup = await svc.app.inject(signedReport(tenant.site.site_key, 'signup', { customer_event_id: 'signup-cus', correlation_token: token, email: 'stage@example.com', customer_id: 'cus_stage' }, SECRET));
    expect(signup.statusCode).toBe(200);
    // The signup's snapshot is gone (its retention) when the customer's first payment is reported, by customer id alone.
    expect(await purgeExpiredSnapshots(svc.db, 30, new Date(now.getTime() + 31 * DAY))).toBeGreaterThanOrEqual(1);
    const path = conversionPath(tenant.site.site_key, 'paid');
    const payload = JSON.stringify({ customer_event_id: 'paid-cus', customer_id: 'cus_stage', value: 29, currency: 'EUR' });
    const paid = await svc.app.inject({ method: 'POST', url: path, payload, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: SECRET, path, body: payload }) } });
    expect(json(paid)).toMatchObject({ status: 'promoted', match: 'identity' });
    const before = google.ingested().length;
    const clock = steppableClock(new Date(now.getTime() + 60_000));
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5 });
    try {
      await delivery.drain();
    } finally {
      await delivery.stop();
    }
    // The signup and the stage (which takes its click from the signup's event) each go with the click and no
    // identifier: the stage's email is held back as the signup's is.
    const sent = google.ingested().slice(before).map((i) => i.event);
    expect(sent).toHaveLength(2);
    for (const event of sent) {
      expect(event.adIdentifiers).toEqual({ gclid: 'Cj0KCQ-gclid-1' }); // the snapshot's click, for both
      expect(event.userData).toBeUndefined();
      expect(event.consent).toMatchObject({ adUserData: 'CONSENT_DENIED' });
    }
    const events = json(await svc.app.inject({ method: 'GET', url: '/v1/events', headers: tenant.auth })).data as Array<{ customer_event_id: string; consent: unknown; actions: Array<{ status: string; error: { code: string } | null }> }>;
    expect(events.find((e) => e.customer_event_id === 'paid-cus')).toMatchObject({ consent: { ad_user_data: 'denied' }, actions: [{ status: 'delivered', error: null }] });
  });

  it("gives the events stored before this version their snapshot's consent (migration 31)", async () => {
    const tenant = await svc.addTenant('Consent migrated');
    await setSiteDomain(svc.db, tenant.site.id, ORIGIN);
    await connectApiTrigger(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, { triggerKey: 'signup' });
    const token = newToken();
    await svc.app.inject({
      method: 'POST',
      url: snapshotsPath(tenant.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN },
      payload: JSON.stringify({ ...snapshotBody({ correlation_token: token }), consent: { ad_user_data: 'denied', ad_personalization: null } }),
    });
    expect((await svc.app.inject(signedReport(tenant.site.site_key, 'signup', { customer_event_id: 'signup-old', correlation_token: token, email: 'old@example.com' }, SECRET))).statusCode).toBe(200);
    // As an event paired before this version was stored: no consent of its own.
    await svc.db.query(`update events set data = data - 'consent' where account_id = $1`, [tenant.accountId]);
    await svc.db.query(MIGRATIONS.find((m) => m.version === 31)!.sql);
    const [event] = await svc.db.query<{ consent: unknown }>(`select data -> 'consent' as consent from events where account_id = $1`, [tenant.accountId]);
    expect(event!.consent).toEqual({ ad_user_data: 'denied', ad_personalization: null });
  });
});
