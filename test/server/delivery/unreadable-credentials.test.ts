/**
 * Credentials sealed under another CNV_SECRET_KEY (a restore, a changed key): a fact about that one connection, never a
 * fault of the round. The connection is marked `reauthorization_required` (told as a refused grant is), its
 * conversions and adjustments wait without an attempt counted, and every other connection's go out in the same round.
 * A notification endpoint whose secret does not open fails its own messages with the reason; the others go out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { secretBox } from '../../../src/server/db/secret-box';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { enqueueNotification, insertEndpoint, startNotificationWorker } from '../../../src/server/notifications';
import { findConnection, sealCredentials, upsertDestination } from '../../../src/server/destinations';
import { testDestination } from '../../../src/server/api/destinations';
import { insertAdjustment } from '../../../src/server/webhook/adjustment-sql';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { startReceiver, type Receiver } from '../support/receiver';
import { TEST_SECRET_KEY, createDeliveryFixture, insertReportedEvent, memoryLog, readOutcome, settingsFor, steppableClock, type DeliveryFixture } from './fixtures';

/** The key the service runs with after the restore; the fixtures seal with TEST_SECRET_KEY (the old one). */
const NEW_KEY = '8'.repeat(64);
const newBox = secretBox(Buffer.from(NEW_KEY, 'hex'));
const oldBox = secretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));

describe.each(DATABASE_KINDS)('credentials sealed under another key on $name', (kind) => {
  let db: Database;
  let google: FakeGoogle;
  let receiver: Receiver;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [db, google, receiver] = await Promise.all([kind.open(), startFakeGoogle(), startReceiver()]);
  });
  afterAll(async () => {
    await Promise.all([db.close(), google.close(), receiver.close()]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  function worker(key: string) {
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const log = memoryLog();
    const w = startDeliveryWorker({ db, settings: settingsFor('http://legacy.invalid', { CNV_SECRET_KEY: key }, google), log, now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    workers.push(w);
    return Object.assign(w, { clock, log });
  }
  /** An account connected to Google (Data Manager API) with credentials sealed under the old key. */
  const account = () => createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
  /** The account connects Google again, now under the new key. */
  const reconnect = (fx: DeliveryFixture) =>
    upsertDestination(db, fx.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' }, sealCredentials(newBox, { refresh_token: google.issueRefreshToken() }));
  const kinds = async (accountId: string) =>
    (await db.query<{ kind: string }>('select kind from notifications where account_id = $1 order by id', [accountId])).map((r) => r.kind);

  it("delivers every other connection's conversions in the round and marks the one whose credentials do not open", async () => {
    const [a, b] = [await account(), await account()];
    await reconnect(b);
    await insertEndpoint(db, a.accountId, 'https://hooks.example.com/cnv', ['destination.reauthorization_required'], newBox.seal('whsec'));
    const ea = await insertReportedEvent(db, a, { customerEventId: 'a-1' });
    const eb = await insertReportedEvent(db, b, { customerEventId: 'b-1' });

    const w = worker(NEW_KEY);
    const results = await w.drain();
    expect(results.map((r) => r.result).sort()).toEqual(['delivered', 'waiting_for_reauthorization']);

    const delivered = await readOutcome(db, eb.eventId);
    expect(delivered.actions[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    const waiting = await readOutcome(db, ea.eventId);
    expect(waiting.actions[0]).toMatchObject({
      status: 'queued',
      attempts: 0,
      error: { code: 'reauthorization_required', message: expect.stringContaining('encrypted with another CNV_SECRET_KEY'), retrying: true },
    });
    expect(waiting.outbox[0]!.attempts).toBe(0);
    expect((await findConnection(db, a.accountId, 'google-ads'))!.status).toBe('reauthorization_required');
    expect((await findConnection(db, b.accountId, 'google-ads'))!.status).toBe('connected');
    // Told as a refused grant is, once.
    expect(await kinds(a.accountId)).toEqual(['destination.reauthorization_required']);
    const [payload] = await db.query<{ payload: { data: { reason: string } } }>('select payload from notifications where account_id = $1', [a.accountId]);
    expect(payload!.payload.data.reason).toMatch(/another CNV_SECRET_KEY.*Connect Google Ads again.*or restart the service with the CNV_SECRET_KEY/s);
    // Its last words do not take back the restart: a connection test that passes after it recovers the destination.
    expect(payload!.payload.data.reason).toMatch(/sent as soon as it works again: .* or a connection test that passes\.$/s);
    expect(w.log.lines.filter((l) => l.msg === 'delivery round failed')).toEqual([]);

    // A reconnects under the new key: its conversion goes out.
    await reconnect(a);
    await db.query(`update outbox set due_at = now() - interval '1 second'`);
    await db.query(`update destinations set status = 'connected' where account_id = $1`, [a.accountId]);
    w.clock.advance(1000);
    expect((await w.drain()).map((r) => r.result)).toEqual(['delivered']);
    expect((await readOutcome(db, ea.eventId)).actions[0]).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it("applies every other connection's adjustments and keeps the unreadable one's waiting", async () => {
    const [a, b] = [await account(), await account()];
    const ea = await insertReportedEvent(db, a, { customerEventId: 'adj-a' });
    const eb = await insertReportedEvent(db, b, { customerEventId: 'adj-b' });
    // Both delivered under the old key.
    expect((await worker(TEST_SECRET_KEY).drain()).map((r) => r.result)).toEqual(['delivered', 'delivered']);
    // Restored with a new key: B connects again, A does not.
    await reconnect(b);
    for (const [fx, id] of [[a, 'adj-a'], [b, 'adj-b']] as const) {
      const recorded = await db.transaction((tx) =>
        insertAdjustment(tx, { siteId: fx.site.id, adjustmentId: `r-${id}`, customerEventId: id, type: 'restate', value: 12, currency: 'EUR', occurredAt: new Date() }),
      );
      expect(recorded).toMatchObject({ ok: true, inserted: true });
    }

    const w = worker(NEW_KEY);
    expect((await w.drain()).map((r) => r.result).sort()).toEqual(['adjusted', 'waiting_for_reauthorization']);
    const resultOf = async (eventId: string) =>
      (await db.query<{ status: string; attempts: number; reason: string | null }>(
        'select r.status, r.attempts, r.reason from adjustment_results r join event_actions a on a.id = r.event_action_id where a.event_id = $1',
        [eventId],
      ))[0]!;
    expect(await resultOf(eb.eventId)).toMatchObject({ status: 'adjusted', attempts: 1 });
    expect(await resultOf(ea.eventId)).toMatchObject({ status: 'queued', attempts: 0, reason: expect.stringContaining('another CNV_SECRET_KEY') });
    expect((await findConnection(db, a.accountId, 'google-ads'))!.status).toBe('reauthorization_required');
    expect(w.log.lines.filter((l) => l.msg === 'adjustment round failed')).toEqual([]);
  });

  it("fails the notifications of an endpoint whose secret does not open, with the reason, and sends the others'", async () => {
    const fx = await account();
    const stale = await insertEndpoint(db, fx.accountId, `${receiver.url}/stale`, ['event.failed'], oldBox.seal('whsec_old'));
    const fresh = await insertEndpoint(db, fx.accountId, `${receiver.url}/fresh`, ['event.failed'], newBox.seal('whsec_new'));
    await db.transaction((tx) => enqueueNotification(tx, fx.accountId, 'event.failed', { site_id: fx.site.id, event_id: 'evt_x', reason: 'test' }));
    const log = memoryLog();
    const notifier = startNotificationWorker({ db, settings: settingsFor('http://legacy.invalid', { CNV_SECRET_KEY: NEW_KEY }), log, autoStart: false, random: () => 0.5 });
    workers.push(notifier);
    const before = receiver.received.length;
    await notifier.drain();
    expect(receiver.received.slice(before).map((r) => r.path)).toEqual(['/hooks/cnv/fresh']);
    const rows = await db.query<{ endpoint_id: string; status: string; error: string | null }>(
      `select n.endpoint_id, n.status, a.error from notifications n left join notification_attempts a on a.notification_id = n.id where n.account_id = $1`,
      [fx.accountId],
    );
    expect(rows.find((r) => r.endpoint_id === fresh.id)).toMatchObject({ status: 'delivered' });
    expect(rows.find((r) => r.endpoint_id === stale.id)).toMatchObject({ status: 'failed', error: expect.stringContaining('another CNV_SECRET_KEY') });
  });

  it('answers a connection test of such credentials with the reason (not a 500) and marks the destination', async () => {
    const fx = await account();
    const row = (await findConnection(db, fx.accountId, 'google-ads'))!;
    const answer = await testDestination(db, settingsFor('http://legacy.invalid', { CNV_SECRET_KEY: NEW_KEY }, google), fx.accountId, row.id);
    expect(answer).toMatchObject({ destination: row.id, ok: false, error: { code: 'reauthorization_required' }, message: expect.stringContaining('another CNV_SECRET_KEY') });
    expect((await findConnection(db, fx.accountId, 'google-ads'))!.status).toBe('reauthorization_required');
  });
});
