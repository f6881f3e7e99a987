import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { claimDeliveries } from '../../../src/server/delivery/outbox-sql';
import { upsertSnapshots } from '../../../src/server/collector/sql';
import { startDeliveryWorker, type DeliveryWorkerOptions } from '../../../src/server/delivery/worker';
import { runDeliveryRound } from '../../../src/server/delivery/round';
import { DEFAULT_BACKOFF } from '../../../src/server/delivery/backoff';
import { markIntakeBusy, requestDelivery } from '../../../src/server/delivery/wakeup';
import { sha256Hex } from '../../../src/server/destinations/hashing';
import { deriveOrderId } from '../../../src/server/destinations/google-ads/legacy-request';
import { startFakeGoogleAds, type FakeGoogleAds } from '../../../src/demo/fake-google-ads';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { secretBox } from '../../../src/server/db/secret-box';
import { AccessTokens } from '../../../src/server/destinations';
import {
  CUSTOMER_ID, DEVELOPER_TOKEN, TEST_SECRET_KEY, createDeliveryFixture, insertReportedEvent, memoryLog, readOutcome, settingsFor,
  steppableClock, type DeliveryFixture,
} from './fixtures';

// The worker's mechanics (retries, backoff, leases, pairing, waking) through the legacy Google Ads API path: its fake
// answers every kind of fault. The Data Manager path and lanes are in data-manager.test.ts.
describe.each(DATABASE_KINDS)('delivery worker on $name', (kind) => {
  let db: Database;
  let fake: FakeGoogleAds;
  let google: FakeGoogle;
  let fx: DeliveryFixture;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [db, fake, google] = await Promise.all([kind.open(), startFakeGoogleAds(), startFakeGoogle()]);
    fx = await createDeliveryFixture(db, { timezone: 'America/New_York', refreshToken: google.issueRefreshToken() });
  });
  afterAll(async () => {
    await Promise.all([db.close(), fake.close(), google.close()]);
  });
  const settings = () => settingsFor(fake.url, {}, google);
  beforeEach(async () => {
    fake.reset();
    await db.query('delete from outbox'); // rows another test left waiting must not be sent by this one
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  /** A worker that only sends on drain(), on a clock the test steps. */
  function worker(clock = steppableClock(), overrides: Partial<DeliveryWorkerOptions> = {}) {
    const log = memoryLog();
    const w = startDeliveryWorker({
      db, settings: settings(), log, now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 10_000, ...overrides,
    });
    workers.push(w);
    return Object.assign(w, { clock, log });
  }

  it('uploads a reported conversion to Google Ads and marks the action delivered and the event completed', async () => {
    const { eventId, customerEventId } = await insertReportedEvent(db, fx, {
      occurredAt: new Date('2026-07-04T16:30:15Z'),
      identity: { email: ' Jane.Doe@Gmail.com', phone: '+1 800 555 0102' },
    });
    const results = await worker().drain();
    expect(results).toEqual([expect.objectContaining({ result: 'delivered' })]);

    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0]!;
    expect(request.problems).toEqual([]);
    expect(request.path).toBe(`/v26/customers/${CUSTOMER_ID}:uploadClickConversions`);
    expect(request.headers.authorization).toMatch(/^Bearer \S+$/); // an access token the fake Google issued
    expect(request.headers['developer-token']).toBe(DEVELOPER_TOKEN);
    expect(request.body).toEqual({
      partialFailure: true,
      conversions: [
        {
          conversionAction: `customers/${CUSTOMER_ID}/conversionActions/987654321`,
          conversionDateTime: '2026-07-04 12:30:15-04:00',
          orderId: deriveOrderId(fx.site.site_key, customerEventId, eventId),
          gclid: 'Cj0KCQtestGCLID',
          userIdentifiers: [{ hashedEmail: sha256Hex('janedoe@gmail.com') }, { hashedPhoneNumber: sha256Hex('+18005550102') }],
        },
      ],
    });

    const { event, actions, outbox } = await readOutcome(db, eventId);
    expect(event.status).toBe('completed');
    expect(actions).toEqual([expect.objectContaining({ destination: 'google-ads', status: 'delivered', attempts: 1, error: null })]);
    expect(actions[0]!.delivered_at).toBeInstanceOf(Date);
    expect(actions[0]!.request).toMatchObject({ order_id: request.body.conversions[0].orderId, click_id: { type: 'gclid' }, job_id: expect.any(String) });
    // The stored request summary holds no raw identity and no hash of it.
    const stored = JSON.stringify(actions[0]!.request);
    for (const raw of ['Jane', 'jane', '800 555 0102', '+18005550102']) expect(stored).not.toContain(raw);
    expect(stored).not.toContain(sha256Hex('janedoe@gmail.com'));
    expect(outbox).toEqual([]);
  });

  it("uploads the due conversions of one Google Ads account in one request, and fails only the row Google rejects", async () => {
    const events = [];
    for (let i = 0; i < 3; i++) events.push(await insertReportedEvent(db, fx, { clickIds: { gclid: `GCLID-${i}` } }));
    fake.respondWith({ kind: 'rowError', index: 1, code: 'UNPARSEABLE_GCLID', message: 'The imported gclid could not be decoded.' });
    await worker().drain();
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body.conversions.map((c: { gclid: string }) => c.gclid).sort()).toEqual(['GCLID-0', 'GCLID-1', 'GCLID-2']);
    const rejected = fake.requests[0]!.body.conversions[1].gclid as string;
    for (const [i, { eventId }] of events.entries()) {
      const { event, actions } = await readOutcome(db, eventId);
      if (`GCLID-${i}` === rejected) {
        expect(event.status).toBe('failed');
        expect(actions[0]).toMatchObject({ status: 'failed', error: { code: 'UNPARSEABLE_GCLID' } });
      } else {
        expect(event.status).toBe('completed');
        expect(actions[0]).toMatchObject({ status: 'delivered' });
      }
    }
  });

  it('retries a 500 with backoff and delivers on the second attempt', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'serverError', status: 500 });
    const w = worker();
    expect((await w.drain()).map((r) => r.result)).toEqual(['retrying']);

    let outcome = await readOutcome(db, eventId);
    expect(outcome.event.status).toBe('queued');
    expect(outcome.actions[0]).toMatchObject({ status: 'queued', attempts: 1, error: { code: 'INTERNAL_ERROR', retrying: true } });
    // Full jitter with random 0.5 on the first retry: half of the 1 s base.
    expect(outcome.outbox[0]!.due_at.getTime()).toBe(w.clock.now().getTime() + 500);
    expect(await w.drain()).toEqual([]); // not due yet

    w.clock.advance(500);
    expect((await w.drain()).map((r) => r.result)).toEqual(['delivered']);
    outcome = await readOutcome(db, eventId);
    expect(outcome.event.status).toBe('completed');
    expect(outcome.actions[0]).toMatchObject({ status: 'delivered', attempts: 2, error: null });
    expect(fake.requests.map((r) => r.answeredStatus)).toEqual([500, 200]);
    expect(fake.requests[1]!.body.conversions[0].orderId).toBe(fake.requests[0]!.body.conversions[0].orderId);
  });

  it("waits as long as a 429's Retry-After says before sending again", async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'rateLimited', retryAfterSeconds: 120 });
    const w = worker();
    await w.drain();
    const { outbox } = await readOutcome(db, eventId);
    expect(outbox[0]!.due_at.getTime()).toBe(w.clock.now().getTime() + 120_000);

    w.clock.advance(119_000);
    expect(await w.drain()).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    w.clock.advance(1_000);
    expect((await w.drain()).map((r) => r.result)).toEqual(['delivered']);
    expect((await readOutcome(db, eventId)).actions[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('fails permanently on a 400 and shows the error on the action and the event', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'badRequest', message: 'Conversion action is not enabled.' });
    await worker().drain();
    const { event, actions, outbox } = await readOutcome(db, eventId);
    expect(event.status).toBe('failed');
    expect(actions[0]).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'INVALID_INPUT', message: 'Conversion action is not enabled.', status: 400 } });
    expect(outbox).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it("fails an action whose row Google rejects in a partial failure, with Google's message", async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'rowError', code: 'EXPIRED_EVENT', message: "The imported event can't be recorded because its click occurred before this conversion's click-through window." });
    await worker().drain();
    const { event, actions } = await readOutcome(db, eventId);
    expect(event.status).toBe('failed');
    expect(actions[0]).toMatchObject({ status: 'failed', error: { code: 'EXPIRED_EVENT', message: expect.stringContaining('click-through window') } });
  });

  it('gives up after the maximum number of attempts with the last error', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'serverError', status: 503 }, { kind: 'serverError', status: 503 }, { kind: 'serverError', status: 502 });
    const w = worker(steppableClock(), { backoff: { maxAttempts: 3 } });
    for (let i = 0; i < 3; i++) {
      await w.drain();
      w.clock.advance(10 * 60_000);
    }
    const { event, actions, outbox } = await readOutcome(db, eventId);
    expect(fake.requests).toHaveLength(3);
    expect(event.status).toBe('failed');
    expect(actions[0]).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'INTERNAL_ERROR', status: 502, message: expect.stringContaining('gave up after 3 attempts') } });
    expect(actions[0]!.error).not.toHaveProperty('retrying');
    expect(outbox).toEqual([]);
  });

  it('retries when Google does not answer in time', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'hang' });
    const clock = steppableClock();
    await worker(clock, { sendTimeoutMs: 200 }).drain(); // a hang outlasts any timeout: this one keeps the test short
    expect((await readOutcome(db, eventId)).actions[0]).toMatchObject({ status: 'queued', attempts: 1, error: { code: 'timeout' } });
    clock.advance(1000);
    // The retry is answered at once, yet on a busy machine not always within 200 ms: it gets the file's usual timeout.
    await worker(clock).drain();
    expect((await readOutcome(db, eventId)).actions[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('sends nothing and fails clearly when a conversion has neither a click id nor a usable identifier', async () => {
    const { eventId } = await insertReportedEvent(db, fx, { clickIds: null, identity: { phone: '555 0102' } });
    await worker().drain();
    expect(fake.requests).toHaveLength(0);
    const { event, actions } = await readOutcome(db, eventId);
    expect(event.status).toBe('failed');
    expect(actions[0]).toMatchObject({ status: 'failed', error: { code: 'no_match_keys' } });
  });

  it("writes a round's outcomes in transactions of outcomesPerTransaction rows, each event ending with all its actions' status", async () => {
    const twoActions = await insertReportedEvent(db, fx, {
      actions: [{ destination: 'google-ads', conversionId: '987654321' }, { destination: 'google-ads', conversionId: '123456789' }],
    });
    const single = await insertReportedEvent(db, fx, { clickIds: { gclid: 'GCLID-single' } });
    let transactions = 0;
    const counting: Database = { ...db, transaction: (fn) => (transactions++, db.transaction(fn)) };
    const results = await worker(undefined, { db: counting, outcomesPerTransaction: 1 }).drain();
    expect(results.map((r) => r.result)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(fake.requests).toHaveLength(1); // one upload for the round, whatever the transactions of its outcomes
    expect(transactions).toBe(3);
    for (const { eventId } of [twoActions, single]) {
      const { event, actions, outbox } = await readOutcome(db, eventId);
      expect(event.status).toBe('completed');
      expect(actions.every((a) => a.status === 'delivered')).toBe(true);
      expect(outbox).toEqual([]);
    }
  });

  it('marks the event failed when one action failed and none is pending, even if another was delivered', async () => {
    const { eventId } = await insertReportedEvent(db, fx, {
      actions: [{ destination: 'google-ads', conversionId: '987654321' }, { destination: 'carrier-pigeon', conversionId: '1' }],
    });
    await worker().drain();
    const { event, actions } = await readOutcome(db, eventId);
    expect(actions.map((a) => [a.destination, a.status, a.error?.code ?? null])).toEqual([
      ['google-ads', 'delivered', null],
      ['carrier-pigeon', 'failed', 'destination_unsupported'],
    ]);
    expect(event.status).toBe('failed');
  });

  it('fails with a clear error when the account has no Google Ads destination connected', async () => {
    const other = await createDeliveryFixture(db, { destinationSettings: null });
    const { eventId } = await insertReportedEvent(db, other);
    await worker().drain();
    expect((await readOutcome(db, eventId)).actions[0]).toMatchObject({ status: 'failed', error: { code: 'destination_not_connected' } });
    expect(fake.requests).toHaveLength(0);
  });

  it('claims a row again after a crash left it leased, and delivers it once', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    const clock = steppableClock();
    // A worker claims the row and dies before sending: the lease stays in the outbox.
    const [claim] = await claimDeliveries(db, { now: clock.now(), leaseMs: 60_000, limit: 10 });
    expect(claim).toBeDefined();
    const restarted = worker(clock);
    expect(await restarted.drain()).toEqual([]); // still leased
    clock.advance(60_001);
    expect((await restarted.drain()).map((r) => r.result)).toEqual(['delivered']);
    expect(fake.requests).toHaveLength(1);
    expect((await readOutcome(db, eventId)).actions[0]).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('records nothing when its lease expired and another worker claimed the row meanwhile', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    const clock = steppableClock();
    const [stale] = await claimDeliveries(db, { now: clock.now(), leaseMs: 1000, limit: 10 });
    clock.advance(1001);
    const [current] = await claimDeliveries(db, { now: clock.now(), leaseMs: 60_000, limit: 10 });
    expect(current!.id).toBe(stale!.id);

    const box = secretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));
    const results = await runDeliveryRound([stale!], {
      db, settings: settings(), log: memoryLog(), now: clock.now, backoff: DEFAULT_BACKOFF, random: () => 0.5,
      sendTimeoutMs: 10_000, signal: new AbortController().signal, box,
      tokens: new AccessTokens({ db, settings: settings(), box, now: clock.now }),
    });
    expect(results).toEqual([{ eventActionId: stale!.eventActionId, result: 'lease_lost' }]);
    const { event, actions, outbox } = await readOutcome(db, eventId);
    expect(actions[0]).toMatchObject({ status: 'queued', attempts: 0 });
    expect(event.status).toBe('queued');
    expect(outbox[0]!.locked_until!.getTime()).toBe(current!.lease.getTime()); // still the new holder's
  });

  it('lets a send in flight at stop() end and records it: delivered once, nothing left to send again', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    const release = fake.holdAnswers();
    const w = startDeliveryWorker({ db, settings: settings(), log: memoryLog(), sendTimeoutMs: 30_000, stopGraceMs: 60_000 });
    workers.push(w);
    await fake.waitForRequests(1);
    const stopped = w.stop();
    release(); // Google answers while the worker stops
    await stopped;
    const outcome = await readOutcome(db, eventId);
    expect(outcome.actions[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(outcome.outbox).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('puts a send still hanging when stop()\'s grace ends back in the outbox, and a new worker delivers it with the same order id', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'hang' });
    const first = startDeliveryWorker({ db, settings: settings(), log: memoryLog(), sendTimeoutMs: 30_000, stopGraceMs: 0 });
    await fake.waitForRequests(1);
    await first.stop();
    let outcome = await readOutcome(db, eventId);
    expect(outcome.outbox).toEqual([expect.objectContaining({ attempts: 0, locked_until: null })]);
    expect(outcome.actions[0]).toMatchObject({ status: 'queued', attempts: 0 });

    await worker().drain();
    outcome = await readOutcome(db, eventId);
    expect(outcome.actions[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(outcome.event.status).toBe('completed');
    expect(fake.requests).toHaveLength(2);
    // Google dedupes the resend: both carry the same order id.
    expect(fake.requests[1]!.body.conversions[0].orderId).toBe(fake.requests[0]!.body.conversions[0].orderId);
  });

  it('counts a resend that Google already recorded as delivered', async () => {
    const { eventId } = await insertReportedEvent(db, fx);
    fake.respondWith({ kind: 'rowError', code: 'ORDER_ID_ALREADY_IN_USE', message: 'The order id was already used.' });
    await worker().drain();
    const { actions } = await readOutcome(db, eventId);
    expect(actions[0]).toMatchObject({ status: 'delivered', request: { deduplicated: 'ORDER_ID_ALREADY_IN_USE' } });
  });

  it('pairs a snapshot that arrives within 10 s of its report and uploads its gclid', async () => {
    const token = 'AbCdEfGhIjKlMnOpQrStUv';
    const { eventId } = await insertReportedEvent(db, fx, { pendingToken: token, identity: { email: 'late@example.com' } });
    const w = worker();
    expect((await w.drain()).map((r) => r.result)).toEqual(['waiting_for_snapshot']);
    expect(fake.requests).toHaveLength(0);
    let outcome = await readOutcome(db, eventId);
    expect(outcome.outbox[0]).toMatchObject({ attempts: 0, locked_until: null });
    expect(outcome.actions[0]).toMatchObject({ status: 'queued', attempts: 0 });

    await upsertSnapshots(db, [{
      siteId: fx.site.id,
      snapshot: {
        correlation_token: token, occurred_at: new Date().toISOString(), trigger: 'form_submit', page_url: 'https://shop.example/pricing',
        referrer: null, cookies: {},
        touch: { click_ids: { gclid: 'LATE-GCLID' }, utm: {}, landing_page_url: 'https://shop.example/?gclid=LATE-GCLID', referrer: null, captured_at: new Date().toISOString() },
      },
    }]);
    w.clock.advance(1000);
    expect((await w.drain()).map((r) => r.result)).toEqual(['delivered']);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body.conversions[0].gclid).toBe('LATE-GCLID');
    outcome = await readOutcome(db, eventId);
    expect(outcome.event).toMatchObject({ status: 'completed', match_quality: 'high', click_ids: { gclid: 'LATE-GCLID' } });
  });

  it('delivers with the identity only, at low match quality, when no snapshot came within 10 s', async () => {
    const { eventId } = await insertReportedEvent(db, fx, { pendingToken: 'ZZZZZZZZZZZZZZZZZZZZZZ', identity: { email: 'nosnap@example.com' } });
    const w = worker();
    await w.drain();
    for (let waited = 0; waited < 10_000; waited += 1000) {
      expect(fake.requests).toHaveLength(0);
      w.clock.advance(1000);
      await w.drain();
    }
    expect(fake.requests).toHaveLength(1);
    const conversion = fake.requests[0]!.body.conversions[0];
    expect(conversion).not.toHaveProperty('gclid');
    expect(conversion.userIdentifiers).toEqual([{ hashedEmail: sha256Hex('nosnap@example.com') }]);
    const { event, actions } = await readOutcome(db, eventId);
    expect(event).toMatchObject({ status: 'completed', match_quality: 'low' });
    expect(actions[0]).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('sends at once when woken, without waiting for its next poll', async () => {
    // The poll runs on setInterval, faked here and never advanced: only wake() and requestDelivery() can start a
    // round, so a delivery proves the wake-up worked, however slow or fast the machine.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const watched = watchStatements(db);
    const w = startDeliveryWorker({ db: watched.db, settings: settings(), log: memoryLog(), pollIntervalMs: 250 });
    try {
      await watched.idle(); // its first round found the outbox empty and is over: it cannot pick up the next event
      await insertReportedEvent(db, fx);
      expect(fake.requests).toHaveLength(0);
      w.wake();
      await fake.waitForRequests(1);
      await insertReportedEvent(db, fx);
      requestDelivery();
      await fake.waitForRequests(2);
    } finally {
      await w.stop();
      vi.useRealTimers();
    }
  });

  it('sends a backlog round after round while no caller waits for the database, and rests once one did', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] }); // no poll: wakes only
    // The embedded store counts who waited for its one connection (Database.waits); here the test sets the count.
    let waits = 0;
    let callerWaitsEachTime = false;
    const watched = watchStatements(db);
    const counted: Database = { ...watched.db, waits: () => (callerWaitsEachTime ? ++waits : waits) };
    // One row per round and a rest of a million times the round: any rest at all would stop the test here.
    const w = startDeliveryWorker({
      db: counted, settings: settings(), log: memoryLog(), pollIntervalMs: 250, batchSize: 1, restFactor: 1_000_000, gatherMs: 0,
    });
    try {
      await watched.idle();
      for (let i = 0; i < 3; i++) await insertReportedEvent(db, fx);
      w.wake();
      await fake.waitForRequests(3);
      await watched.idle();
      // Callers now wait for the database during every round: after the next round the worker rests.
      callerWaitsEachTime = true;
      for (let i = 0; i < 2; i++) await insertReportedEvent(db, fx);
      w.wake();
      await fake.waitForRequests(4);
      await watched.idle();
      expect(fake.requests).toHaveLength(4);
    } finally {
      await w.stop();
      vi.useRealTimers();
    }
  });

  it('holds rounds back while reports queue at the webhook, sends once they stop, and holds no longer than holdWhileIntakeBusyMs', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
    const watched = watchStatements(db);
    const w = startDeliveryWorker({ db: watched.db, settings: settings(), log: memoryLog(), pollIntervalMs: 250, gatherMs: 0, holdWhileIntakeBusyMs: 1_000 });
    /** Reports keep queueing at the webhook for `ms`: the report writer says so after each batch, here every 50 ms. */
    const burst = async (ms: number) => {
      for (let t = 0; t < ms; t += 50) {
        markIntakeBusy(watched.db);
        vi.advanceTimersByTime(50);
        await turn();
      }
    };
    try {
      await watched.idle();
      // A burst of half a second: the conversion it queued waits for its end.
      markIntakeBusy(watched.db);
      await insertReportedEvent(db, fx);
      w.wake();
      await burst(500);
      expect(fake.requests).toHaveLength(0);
      vi.advanceTimersByTime(200); // quiet for longer than the busy window: the held round starts
      await until(() => fake.requests.length === 1);
      await watched.idle();

      // A burst longer than the hold: held for 1 s from when the worker began to hold (on the embedded store, after a
      // rest that the last round earned), then sent while the burst goes on.
      markIntakeBusy(watched.db);
      await insertReportedEvent(db, fx);
      w.wake();
      await burst(800);
      expect(fake.requests).toHaveLength(1);
      await burst(800);
      await until(() => fake.requests.length === 2);
    } finally {
      await w.stop();
      vi.useRealTimers();
    }
  });

  it('gathers the deliveries of reports that keep coming into one round, gatherMs after the last round began', async () => {
    // Clocks faked and stepped by hand: the gathering wait passes only when the test says so.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
    const watched = watchStatements(db);
    const w = startDeliveryWorker({ db: watched.db, settings: settings(), log: memoryLog(), pollIntervalMs: 250, gatherMs: 100 });
    try {
      await watched.idle(); // the first round found nothing: the next wake starts one at once
      await insertReportedEvent(db, fx);
      w.wake();
      await until(() => fake.requests.length === 1);
      await watched.idle();
      // Two more reports right after a round that sent one: they wait for the gathering round, together.
      await insertReportedEvent(db, fx);
      w.wake();
      await insertReportedEvent(db, fx);
      requestDelivery();
      await watched.idle();
      expect(fake.requests).toHaveLength(1);
      vi.advanceTimersByTime(99);
      await watched.idle();
      expect(fake.requests).toHaveLength(1);
      vi.advanceTimersByTime(1);
      await until(() => fake.requests.length === 2);
      expect((fake.requests[1]!.body as { conversions: unknown[] }).conversions).toHaveLength(2);
    } finally {
      await w.stop();
      vi.useRealTimers();
    }
  });
});

/** One turn of the event loop (setImmediate, which the tests' fake timers leave real). */
function turn(): Promise<unknown> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Turns of the event loop until `done()` holds (the test's timeout ends a wait that never does). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await turn();
}

/**
 * `db` seen from outside: `idle()` resolves once it has answered at least one statement and none is running any more
 * (checked after a turn of the event loop, so the caller's continuation of that answer has run too).
 */
function watchStatements(db: Database): { db: Database; idle(): Promise<void> } {
  let running = 0;
  let answered = 0;
  const counted = <T>(work: () => Promise<T>): Promise<T> => {
    running++;
    return work().finally(() => {
      running--;
      answered++;
    });
  };
  return {
    db: {
      kind: db.kind,
      query: (sql, params) => counted(() => db.query(sql, params)),
      transaction: (fn) => counted(() => db.transaction(fn)),
      exec: (sql) => counted(() => db.exec(sql)),
      close: () => db.close(),
    },
    async idle() {
      do await turn();
      while (answered === 0 || running > 0);
    },
  };
}
