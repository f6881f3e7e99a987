/**
 * Erasure against a send in flight, on both stores: a delivery round builds its request and sends it to the strict
 * fake of Google's Data Manager API, which holds its answer until the test has erased the person. The round's outcome
 * statement then writes nothing that identifies (no request summary, no attempt with one), the action says the
 * platform may have the conversion, and the event is never sent again. No timing: the fake waits for a promise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, newToken, setSiteDomain, signedReport, snapshotBody } from './support/fixtures';
import { googleSettings } from './support/google-connection';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { snapshotsPath, SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { adjustmentPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { claimDeliveries, recordOutcomes } from '../../src/server/delivery/outbox-sql';

const ORIGIN = 'https://www.example.com';
const SECRET = 'whsec_in_flight_test_secret_0123456789';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.each(DATABASE_KINDS)('erasure while a send is in flight, on $name', (kind) => {
  let svc: RestService;
  let google: FakeGoogle;

  beforeAll(async () => {
    google = await startFakeGoogle();
    svc = await createRestService(kind, googleSettings(google));
    await setSiteDomain(svc.db, svc.site.id, ORIGIN);
    await connectApiTrigger(svc.db, { id: svc.site.id, account_id: svc.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: svc.site.id, account_id: svc.accountId }, { triggerKey: 'signup' });
    await upsertDestination(
      svc.db,
      svc.accountId,
      'google-ads',
      { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
      sealCredentials(serviceSecretBox(svc.settings), { refresh_token: google.issueRefreshToken() }),
    );
  });
  afterAll(async () => {
    await svc?.close();
    await google?.close();
  });

  /** A click (snapshot with a gclid) and a signup report of `email` (worth 29 EUR); returns the event id. */
  async function signup(email: string, gclid: string, customerEventId = `signup-${newToken().slice(0, 8)}`): Promise<string> {
    const token = newToken();
    const snapshot = await svc.app.inject({
      method: 'POST',
      url: snapshotsPath(svc.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN },
      payload: JSON.stringify(snapshotBody({
        correlation_token: token,
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
        touch: { click_ids: { gclid }, utm: {}, landing_page_url: `${ORIGIN}/?gclid=${gclid}`, referrer: null, captured_at: new Date(Date.now() - 3_600_000).toISOString() },
      })),
    });
    expect(snapshot.statusCode).toBe(204);
    const report = await svc.app.inject(signedReport(svc.site.site_key, 'signup', { customer_event_id: customerEventId, correlation_token: token, email, value: 29, currency: 'EUR' }, SECRET));
    expect(report.statusCode).toBe(200);
    const [event] = await svc.db.query<{ id: string }>(`select id from events where data ->> 'customer_event_id' = $1`, [customerEventId]);
    return event!.id;
  }

  /** Everything delivery stored of an event, as lower-cased text. */
  async function deliveryRows(eventId: string): Promise<string> {
    const rows = await svc.db.query(
      `select a.*, (select json_agg(d) from delivery_attempts d where d.event_action_id = a.id) as attempts,
              (select json_agg(o) from outbox o where o.event_action_id = a.id) as outbox
       from event_actions a where a.event_id = $1`,
      [eventId],
    );
    return JSON.stringify(rows).toLowerCase();
  }

  it('a round that sent before the erasure writes no summary after it; the action says the platform may have it', async () => {
    const email = 'in.flight@example.com';
    const gclid = `Cj0KCQ-inflight-${kind.name}`;
    const eventId = await signup(email, gclid);

    let release!: () => void;
    google.server.respondWith({ kind: 'hold', until: new Promise<void>((resolve) => (release = resolve)) });
    const worker = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: quiet, autoStart: false });
    try {
      const draining = worker.drain();
      // The request is built and at Google: the send is in flight.
      await google.server.waitForRequests(1, { filter: (r) => r.path === '/v1/events:ingest' });
      const erasure = await svc.app.inject({
        method: 'POST', url: '/v1/erasures', headers: { ...svc.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ email }),
      });
      expect(json(erasure).matched).toEqual({ reports: 1, events: 1, snapshots: 1, form_submissions: 0 });
      release();
      // The round's claim went with the erasure: its outcome is not written.
      expect(await draining).toEqual([expect.objectContaining({ result: 'lease_lost' })]);
    } finally {
      release();
      await worker.stop();
    }

    // Google did get it (the request left before the erasure): that cannot be called back.
    expect(google.ingested().filter((i) => i.event.adIdentifiers?.gclid === gclid)).toHaveLength(1);
    // Nothing that identifies was written back: no summary, no attempt, no click id, no identifier kinds.
    const stored = await deliveryRows(eventId);
    for (const value of [gclid.toLowerCase(), email, 'useridentifiers', 'clickid']) expect(stored, value).not.toContain(value);
    const [action] = await svc.db.query<{ status: string; error: { code: string; message: string }; request: unknown }>(
      'select status, error, request from event_actions where event_id = $1',
      [eventId],
    );
    expect(action).toMatchObject({ status: 'failed', request: null, error: { code: 'erased' } });
    expect(action!.error.message).toContain('may have received it');
    expect(await svc.db.query('select 1 from delivery_attempts d join event_actions a on a.id = d.event_action_id where a.event_id = $1', [eventId])).toHaveLength(0);
    // The API says the same, and the event is never sent again.
    const shown = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${eventId}`, headers: svc.auth }));
    expect(shown).toMatchObject({ erased: true, email: null, click_ids: null, status: 'failed', actions: [{ status: 'failed', request: null, error: { code: 'erased' } }] });
    expect(JSON.stringify(shown).toLowerCase()).not.toContain(gclid.toLowerCase());
    const again = await svc.app.inject({ method: 'POST', url: `/v1/events/${eventId}/redeliver`, headers: svc.auth });
    expect(again.statusCode).toBe(409);
    expect(json(again).error).toMatchObject({ type: 'conflict_error', code: 'event_erased' });
    expect(await svc.db.query('select 1 from outbox o join event_actions a on a.id = o.event_action_id where a.event_id = $1', [eventId])).toHaveLength(0);
  });

  it('a send under way that the platform refused for its access token is not sent again once the person is erased', async () => {
    const email = 'refused.in.flight@example.com';
    const gclid = `Cj0KCQ-refused-${kind.name}`;
    const carrying = (r: { path: string; text: string }) => r.path === '/v1/events:ingest' && r.text.includes(gclid);
    const worker = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: quiet, autoStart: false });
    let release: () => void = () => undefined;
    try {
      // The worker holds an access token (from an earlier send), which Google will say has expired.
      await signup('warm.up@example.com', `Cj0KCQ-warm-${kind.name}`);
      await worker.drain();
      await signup(email, gclid);
      // The send is at Google, whose answer (the access token refused) waits until the person is erased.
      google.server.respondWith({ kind: 'requestError', status: 401, grpcStatus: 'UNAUTHENTICATED', reason: 'ACCESS_TOKEN_EXPIRED' });
      release = google.server.holdAnswers();
      const draining = worker.drain();
      await google.server.waitForRequests(1, { filter: carrying });
      const erasure = await svc.app.inject({
        method: 'POST', url: '/v1/erasures', headers: { ...svc.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ email }),
      });
      expect(json(erasure).matched.events).toBe(1);
      release();
      expect(await draining).toEqual([expect.objectContaining({ result: 'lease_lost' })]);
    } finally {
      release();
      await worker.stop();
    }
    // Refused, that send was not received; it is not sent again after the erasure with a new token.
    expect(google.server.requests.filter(carrying)).toHaveLength(1);
    expect(google.ingested().filter((i) => i.event.adIdentifiers?.gclid === gclid)).toHaveLength(0);
  });

  it('an adjustment under way when the person is erased writes nothing back either, and says the platform may have applied it', async () => {
    const email = 'adjusted.in.flight@example.com';
    const gclid = `Cj0KCQ-adjusting-${kind.name}`;
    const order = `order-${newToken().slice(0, 8)}`;
    const eventId = await signup(email, gclid, order);
    const worker = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: quiet, autoStart: false });
    let release!: () => void;
    try {
      expect(await worker.drain()).toEqual([expect.objectContaining({ result: 'delivered' })]);
      const payload = JSON.stringify({ adjustment_id: `upgrade-${order}`, customer_event_id: order, type: 'restate', value: 49, currency: 'EUR' });
      const path = adjustmentPath(svc.site.site_key);
      const accepted = await svc.app.inject({
        method: 'POST', url: path, payload,
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: SECRET, path, body: payload }) },
      });
      expect(json(accepted)).toMatchObject({ status: 'accepted', events: 1 });

      const sent = google.server.requests.filter((r) => r.path === '/v1/events:ingest').length;
      google.server.respondWith({ kind: 'hold', until: new Promise<void>((resolve) => (release = resolve)) });
      const draining = worker.drain();
      await google.server.waitForRequests(sent + 1, { filter: (r) => r.path === '/v1/events:ingest' });
      expect(json(await svc.app.inject({
        method: 'POST', url: '/v1/erasures', headers: { ...svc.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ email }),
      })).matched.events).toBe(1);
      release();
      expect(await draining).toEqual([expect.objectContaining({ result: 'lease_lost' })]);
    } finally {
      release?.();
      await worker.stop();
    }
    // Google applied it (the request left before the erasure); cnv wrote nothing of it back.
    expect(google.adjusted().filter((a) => a.event.adIdentifiers?.gclid === gclid)).toHaveLength(1);
    const results = await svc.db.query<{ status: string; request: unknown; reason: string }>(
      'select r.status, r.request, r.reason from adjustment_results r join event_actions a on a.id = r.event_action_id where a.event_id = $1',
      [eventId],
    );
    expect(results).toEqual([{ status: 'failed', request: null, reason: expect.stringContaining('erased while this adjustment was being sent') }]);
    expect(await deliveryRows(eventId)).not.toContain(gclid.toLowerCase());
    const shown = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${eventId}`, headers: svc.auth }));
    expect(shown.adjustments).toEqual([expect.objectContaining({ type: 'restate', results: [expect.objectContaining({ status: 'failed' })] })]);
    expect(JSON.stringify(shown).toLowerCase()).not.toContain(gclid.toLowerCase());
  });

  it('the outcome statement itself writes no request summary for an event erased meanwhile, even under a lease it holds', async () => {
    const gclid = `Cj0KCQ-fenced-${kind.name}`;
    const eventId = await signup('fenced@example.com', gclid);
    const claims = (await claimDeliveries(svc.db, { now: new Date(), leaseMs: 60_000, limit: 100 }));
    const [actionRow] = await svc.db.query<{ id: string }>('select id from event_actions where event_id = $1', [eventId]);
    const claim = claims.find((c) => c.eventActionId === actionRow!.id)!;
    expect(claim).toBeDefined();
    // Marked erased without taking the lease (as a future writer might): the statement itself must hold the line.
    await svc.db.query('update events set erased_at = now() where id = $1', [eventId]);
    const request = { api: 'google-data-manager', clickId: gclid, userIdentifiers: ['emailAddress'] };
    const kept = await svc.db.transaction((tx) =>
      recordOutcomes(tx, [{ claim, finish: true, reschedule: null, countsAttempt: true, action: { actionId: claim.eventActionId, status: 'delivered', attempts: 1, error: null, request } }], new Date()),
    );
    expect(kept.has(claim.id)).toBe(true);
    const [action] = await svc.db.query<{ status: string; request: unknown }>('select status, request from event_actions where id = $1', [claim.eventActionId]);
    expect(action).toEqual({ status: 'delivered', request: null });
    const attempts = await svc.db.query<{ request: unknown }>('select request from delivery_attempts where event_action_id = $1', [claim.eventActionId]);
    expect(attempts).toEqual([{ request: null }]);
    expect(await deliveryRows(eventId)).not.toContain(gclid.toLowerCase());
  });
});
