/**
 * Delivery to Google Ads through the Data Manager API, against the strict fake of Google (OAuth token endpoint and
 * events:ingest): the exact request, batching, isolating a bad event, token refresh, a refused refresh token that makes
 * conversions wait until a new connection, and a hanging account that never holds back another.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { resumeDeliveries } from '../../../src/server/delivery/outbox-sql';
import { getEvent } from '../../../src/server/api/events/events';
import { erasePerson, erasureHash } from '../../../src/server/api/erasures';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { secretBox } from '../../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../../src/server/destinations';
import {
  TEST_SECRET_KEY, createDeliveryFixture, insertReportedEvent, memoryLog, readOutcome, settingsFor, steppableClock, type DeliveryFixture,
} from './fixtures';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each(DATABASE_KINDS)('Google Ads delivery through the Data Manager API on $name', (kind) => {
  let db: Database;
  let google: FakeGoogle;
  let fx: DeliveryFixture;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [db, google] = await Promise.all([kind.open(), startFakeGoogle()]);
  });
  afterAll(async () => {
    await Promise.all([db.close(), google.close()]);
  });
  beforeEach(async () => {
    google.server.reset();
    await db.query('delete from outbox');
    fx = await createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  function worker(clock = steppableClock(), sendTimeoutMs = 2000, stopGraceMs?: number) {
    const log = memoryLog();
    const w = startDeliveryWorker({
      db, settings: settingsFor('http://legacy.invalid', {}, google), log, now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs, stopGraceMs,
    });
    workers.push(w);
    return Object.assign(w, { log, clock });
  }

  const ingests = () => google.server.requests.filter((r) => r.path === '/v1/events:ingest');
  const tokenCalls = () => google.server.requests.filter((r) => r.path === '/token');

  it('sends a conversion to events:ingest exactly as Google documents it, and records the request id', async () => {
    const { eventId, actionIds } = await insertReportedEvent(db, fx, {
      occurredAt: new Date('2026-11-20T16:30:15.000Z'),
      identity: { email: ' Jane.Doe@Gmail.com', phone: '+1 800 555 0102' },
    });
    expect(await worker().drain()).toEqual([expect.objectContaining({ result: 'delivered' })]);

    expect(ingests()).toHaveLength(1);
    const request = ingests()[0]!;
    expect(request.problems).toEqual([]);
    expect(request.headers.authorization).toMatch(/^Bearer \S+$/);
    expect(request.body).toEqual({
      destinations: [{ operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, productDestinationId: '987654321' }],
      events: [
        {
          transactionId: expect.stringMatching(/^[0-9a-f]{32}$/),
          eventTimestamp: '2026-11-20T16:30:15.000Z',
          eventSource: 'WEB',
          adIdentifiers: { gclid: 'Cj0KCQtestGCLID' },
          userData: { userIdentifiers: [{ emailAddress: sha256('janedoe@gmail.com') }, { phoneNumber: sha256('+18005550102') }] },
        },
      ],
      encoding: 'HEX',
    });
    const { event, actions } = await readOutcome(db, eventId);
    expect(event.status).toBe('completed');
    expect(actions[0]).toMatchObject({ id: actionIds[0], status: 'delivered', attempts: 1, error: null });
    expect(actions[0]!.request).toMatchObject({ platform_request_id: expect.any(String) });
    // No raw identity in what is stored about the request.
    const summary = JSON.stringify(actions[0]!.request);
    for (const raw of ['Jane', 'jane', 'Gmail', '800 555 0102', '+18005550102']) expect(summary).not.toContain(raw);
  });

  it("asks Google for the upload's diagnostics half an hour after delivery and shows them on the action", async () => {
    const { eventId } = await insertReportedEvent(db, fx, { customerEventId: 'diagnosed' });
    const clock = steppableClock();
    const w = worker(clock);
    await w.drain();
    expect(await w.checkDiagnostics()).toBe(0); // too early
    clock.advance(31 * 60_000);
    google.setNow(clock.now());
    expect(await w.checkDiagnostics()).toBeGreaterThanOrEqual(1); // this upload (and earlier tests' ones, same database)
    const { actions } = await readOutcome(db, eventId);
    const diagnostics = (actions[0]!.request as { diagnostics: Record<string, unknown> }).diagnostics;
    expect(diagnostics).toMatchObject({ final: true, state: 'success', message: expect.any(String), checked_at: expect.any(String) });
    const statusCalls = google.server.requests.filter((r) => r.path === '/v1/requestStatus:retrieve');
    expect(statusCalls.length).toBeGreaterThanOrEqual(1);
    expect(statusCalls.flatMap((r) => r.problems)).toEqual([]);
    expect(await w.checkDiagnostics()).toBe(0); // final: never asked again
  });

  it("writes no diagnostics onto an action whose person was erased while Google was being asked", async () => {
    const email = 'diag.erased@example.com';
    const { eventId, actionIds } = await insertReportedEvent(db, fx, { customerEventId: 'diag-erased', identity: { email } });
    const clock = steppableClock();
    const w = worker(clock);
    await w.drain();
    // Only this upload is due (earlier tests' uploads in the same database are marked done).
    await db.query(
      `update event_actions set request = request || '{"diagnostics": {"final": true}}'::jsonb
       where request ? 'platform_request_id' and id <> all($1::text[])`,
      [actionIds],
    );
    clock.advance(31 * 60_000);
    google.setNow(clock.now());
    const release = google.server.holdAnswers();
    const asked = w.checkDiagnostics();
    await google.server.waitForRequests(1, { filter: (r) => r.path === '/v1/requestStatus:retrieve' });
    // The erasure commits while Google's answer is on its way.
    const erased = await erasePerson(db, fx.accountId, { email, phone: null, customerId: null }, erasureHash({ secretKey: TEST_SECRET_KEY, dataDir: '/nonexistent' }));
    expect(erased.matched.events).toBe(1);
    release();
    expect(await asked).toBe(1);
    const { actions } = await readOutcome(db, eventId);
    expect(actions[0]).toMatchObject({ status: 'delivered', request: null });
    expect(await w.checkDiagnostics()).toBe(0);
  });

  it('keeps every send of an action: a retried 503, then the delivery, each with what the platform answered', async () => {
    const { eventId } = await insertReportedEvent(db, fx, { customerEventId: 'history' });
    google.server.respondWith({ kind: 'serverError', status: 503 });
    const clock = steppableClock();
    const w = worker(clock);
    expect(await w.drain()).toEqual([expect.objectContaining({ result: 'retrying' })]);
    clock.advance(60 * 60_000);
    expect(await w.drain()).toEqual([expect.objectContaining({ result: 'delivered' })]);
    const event = await getEvent(db, fx.accountId, eventId);
    expect(event.actions[0]!.history).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'retry', error: expect.objectContaining({ status: 503, retrying: true }) }),
      expect.objectContaining({ attempt: 2, outcome: 'delivered', error: null, request: expect.objectContaining({ clickId: 'Cj0KCQtestGCLID' }) }),
    ]);
  });

  it('sends the conversions of one account and action in one request, and a resend carries the same transaction id', async () => {
    for (let i = 0; i < 3; i++) await insertReportedEvent(db, fx, { customerEventId: `batch-${i}` });
    const results = await worker().drain();
    expect(results.map((r) => r.result)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(ingests()).toHaveLength(1);
    expect(ingests()[0]!.body.events).toHaveLength(3);
  });

  it('isolates an event Google refuses, so the others in its request are delivered', async () => {
    const events = [];
    for (let i = 0; i < 3; i++) events.push(await insertReportedEvent(db, fx, { customerEventId: `isolate-${i}` }));
    google.server.respondWith({ kind: 'eventError', reason: 'INVALID_FORMAT', index: 1, field: 'adIdentifiers.gclid' });
    const before = google.ingested().length;
    await worker().drain();
    const outcomes = await Promise.all(events.map((e) => readOutcome(db, e.eventId)));
    expect(outcomes.map((o) => o.actions[0]!.status)).toEqual(['delivered', 'failed', 'delivered']);
    expect(outcomes[1]!.actions[0]!.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect(google.ingested().length - before).toBe(2);
  });

  it('refreshes the access token once and reuses it until it nears expiry', async () => {
    await insertReportedEvent(db, fx, { customerEventId: 'token-1' });
    const clock = steppableClock();
    const w = worker(clock);
    await w.drain();
    await insertReportedEvent(db, fx, { customerEventId: 'token-2' });
    clock.advance(1000); // the worker's clock runs behind the database's: make the new row due
    await w.drain();
    expect(tokenCalls()).toHaveLength(1);
    clock.advance(2 * 60 * 60_000); // past the fake's one-hour tokens
    google.setNow(clock.now());
    await insertReportedEvent(db, fx, { customerEventId: 'token-3' });
    await w.drain();
    expect(tokenCalls()).toHaveLength(2);
    expect(tokenCalls().every((r) => r.body.grant_type === 'refresh_token' && r.problems.length === 0)).toBe(true);
  });

  it('makes conversions wait when Google refuses the refresh token, and sends them once the account is connected again', async () => {
    google.revokeRefreshTokens();
    const { eventId } = await insertReportedEvent(db, fx, { customerEventId: 'revoked-1' });
    const clock = steppableClock();
    const w = worker(clock);
    expect(await w.drain()).toEqual([expect.objectContaining({ result: 'waiting_for_reauthorization' })]);
    let outcome = await readOutcome(db, eventId);
    expect(outcome.event.status).toBe('queued');
    expect(outcome.actions[0]).toMatchObject({ status: 'queued', attempts: 0, error: { code: 'reauthorization_required', retrying: true } });
    const [connection] = await db.query<{ status: string }>(`select status from destinations where account_id = $1`, [fx.accountId]);
    expect(connection!.status).toBe('reauthorization_required');
    expect(ingests()).toHaveLength(0);

    // A new handoff stores a new refresh token and makes the waiting rows due.
    const box = secretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));
    await upsertDestination(db, fx.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
      sealCredentials(box, { refresh_token: google.issueRefreshToken() }));
    expect(await resumeDeliveries(db, fx.accountId, 'google-ads')).toBe(1);
    clock.advance(1000);
    expect(await w.drain()).toEqual([expect.objectContaining({ result: 'delivered' })]);
    outcome = await readOutcome(db, eventId);
    expect(outcome.event.status).toBe('completed');
  });

  it('delivers one account while another account hangs', async () => {
    const other = await createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
    // Both accounts hold a token first, so the planned hang is taken by an ingest request.
    await insertReportedEvent(db, fx, { customerEventId: 'warm-a' });
    await insertReportedEvent(db, other, { customerEventId: 'warm-b' });
    const clock = steppableClock();
    const warm = worker(clock, 60_000, 0); // its stop interrupts the hanging request at once
    await warm.drain();
    google.server.reset();

    const a = await insertReportedEvent(db, fx, { customerEventId: 'lane-a' });
    const b = await insertReportedEvent(db, other, { customerEventId: 'lane-b' });
    google.server.respondWith({ kind: 'hang' });
    clock.advance(1000);
    const draining = warm.drain();
    await google.server.waitForRequests(2, { filter: (r) => r.path === '/v1/events:ingest' });
    // One account's request hangs (the fake holds it until it closes); the other's is answered and recorded meanwhile.
    const deliveredEvent = await waitForDelivered([a.eventId, b.eventId]);
    expect(ingests().filter((r) => r.answeredStatus === null)).toHaveLength(1);
    const waiting = deliveredEvent === a.eventId ? b.eventId : a.eventId;
    expect((await readOutcome(db, waiting)).actions[0]!.status).toBe('queued');
    await warm.stop();
    await draining.catch(() => undefined);
  });

  /** Resolves with the first of the events whose action is recorded delivered (polls the database, no fixed sleep). */
  async function waitForDelivered(eventIds: string[]): Promise<string> {
    for (;;) {
      for (const id of eventIds) if ((await readOutcome(db, id)).actions[0]!.status === 'delivered') return id;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
});
