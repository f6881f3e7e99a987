/**
 * A connection's authorization against what happens around a send: a reconnect while a send is in flight never
 * turns the new grant `reauthorization_required` (nor tells anyone so) and never loses the new credentials to the old
 * grant's rotated refresh token; a connection test that passes recovers a waiting connection exactly as a reconnect
 * does; a reconnect makes due only the deliveries that waited for it, never one a worker holds nor one waiting on
 * a platform's rate limit; and a delivery a worker held while a reconnect came is due at once when the worker writes
 * its wait, not 10 minutes later while the destination shows connected.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { secretBox } from '../../../src/server/db/secret-box';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { resumeDeliveries } from '../../../src/server/delivery/outbox-sql';
import { testDestination } from '../../../src/server/api/destinations';
import { insertEndpoint } from '../../../src/server/notifications';
import { loadSettings, type Settings } from '../../../src/server/settings';
import {
  AccessTokens, findConnection, openCredentials, platformFor, sealCredentials, toConnection, upsertDestination,
} from '../../../src/server/destinations';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import {
  TEST_SECRET_KEY, afterTransactionRunning, beforeStatement, createDeliveryFixture, insertReportedEvent, memoryLog, openTwoHandles, readOutcome,
  settingsFor, steppableClock,
} from './fixtures';
import { connect, createPlatformAccount, reconnect, reportSignup, startPlatform, type PlatformFake } from './platforms';

const box = secretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));
const KINDS = ['destination.reauthorization_required', 'destination.recovered'];

describe.each(DATABASE_KINDS)('authorization races on $name', (kind) => {
  let db: Database;
  let google: FakeGoogle;
  let meta: PlatformFake;
  let microsoft: PlatformFake;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [db, google, meta, microsoft] = await Promise.all([kind.open(), startFakeGoogle(), startPlatform('meta'), startPlatform('microsoft-ads')]);
  });
  afterAll(async () => {
    await Promise.all([db.close(), google.close(), meta.close(), microsoft.close()]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  function worker(settings: Settings, on: Database = db) {
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const w = startDeliveryWorker({ db: on, settings, log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    workers.push(w);
    return Object.assign(w, { clock });
  }
  const platformSettings = (p: PlatformFake) => loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...p.env });
  const notificationKinds = async (accountId: string) =>
    (await db.query<{ kind: string }>('select kind from notifications where account_id = $1 order by id', [accountId])).map((r) => r.kind);
  const storedCredentials = async (accountId: string, type: string) => {
    const row = await findConnection(db, accountId, type);
    return { status: row!.status, credentials: openCredentials(box, row!.credentials) };
  };

  const isIngest = (r: { path: string }) => r.path === '/v1/events:ingest';

  /**
   * A Google Ads send held in flight (answered with `responses` once released) while the user reconnects Google: the
   * old grant's access tokens are revoked (and its refresh tokens with `revokeRefresh`), and a new grant is stored with
   * `customerId`. Returns the drain under way and what is needed to check its outcome.
   */
  async function sendAcrossReconnect({ responses = [], revokeRefresh, customerId }: { responses?: unknown[]; revokeRefresh: boolean; customerId: string }) {
    const fx = await createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
    await insertEndpoint(db, fx.accountId, 'https://hooks.example.com/cnv', KINDS, box.seal('whsec'));
    const w = worker(settingsFor('http://legacy.invalid', {}, google));
    await insertReportedEvent(db, fx, { customerEventId: 'warm' });
    expect(await w.drain()).toEqual([expect.objectContaining({ result: 'delivered' })]); // an access token is cached

    const { eventId } = await insertReportedEvent(db, fx, { customerEventId: 'in-flight' });
    let release!: () => void;
    google.server.respondWith({ kind: 'hold', until: new Promise<void>((resolve) => (release = resolve)) }, ...(responses as never[]));
    const sent = google.server.requests.filter(isIngest).length;
    w.clock.advance(1000);
    const draining = w.drain();
    await google.server.waitForRequests(sent + 1, { filter: isIngest });

    // Meanwhile the user reconnects Google. The held row is the worker's: the reconnect's resumeDeliveries cannot take it.
    google.revokeAccessTokens();
    if (revokeRefresh) google.revokeRefreshTokens();
    const newRefreshToken = google.issueRefreshToken();
    await db.transaction(async (tx) => {
      await upsertDestination(tx, fx.accountId, 'google-ads', { customer_id: customerId, login_customer_id: null, api: 'data_manager' }, sealCredentials(box, { refresh_token: newRefreshToken }));
      await resumeDeliveries(tx, fx.accountId, 'google-ads');
    });
    release();
    return { fx, eventId, draining, newRefreshToken, ingests: () => google.server.requests.filter(isIngest).slice(sent) };
  }

  /** The conversion sent with the new grant: the connection connected with it, nobody told, one attempt counted. */
  async function expectDeliveredWithNewGrant(run: Awaited<ReturnType<typeof sendAcrossReconnect>>) {
    expect(await storedCredentials(run.fx.accountId, 'google-ads')).toEqual({ status: 'connected', credentials: { refresh_token: run.newRefreshToken } });
    expect(await notificationKinds(run.fx.accountId)).toEqual([]);
    const { event, actions } = await readOutcome(db, run.eventId);
    expect(event.status).toBe('completed');
    expect(actions[0]).toMatchObject({ status: 'delivered', attempts: 1, error: null });
  }

  it('a send in flight across a reconnect keeps the new grant connected, tells nobody, and delivers with the new grant', async () => {
    // The held send gets a 401: its token was revoked with the old grant.
    const run = await sendAcrossReconnect({ revokeRefresh: true, customerId: '1234567890' });
    expect(await run.draining).toEqual([expect.objectContaining({ result: 'delivered' })]);
    expect(run.ingests().map((r) => r.answeredStatus)).toEqual([401, 200]);
    await expectDeliveredWithNewGrant(run);
  });

  it('a token refused again after its refresh, with credentials a reconnect replaced meanwhile, is sent again at once with the new grant', async () => {
    // The held send is refused (its token revoked); the old grant still refreshes, and the send with the fresh token is
    // refused too (the platform took the grant's access away): without the reconnect, a reauthorization.
    const refused = { kind: 'requestError', status: 401, grpcStatus: 'UNAUTHENTICATED', reason: 'ACCESS_TOKEN_EXPIRED' } as const;
    const run = await sendAcrossReconnect({ responses: [refused], revokeRefresh: false, customerId: '1234567890' });
    // Not put off to the next look for a reauthorization (10 minutes): due at once, and sent with the new grant.
    expect(await run.draining).toEqual([expect.objectContaining({ result: 'credentials_replaced' }), expect.objectContaining({ result: 'delivered' })]);
    expect(run.ingests().map((r) => r.answeredStatus)).toEqual([401, 401, 200]);
    await expectDeliveredWithNewGrant(run);
  });

  it('a refresh refused after a reconnect to another account replaced the credentials: sent again at once, with the new account', async () => {
    // The old grant is revoked (its refresh is refused), and the new credentials come with other settings, so the
    // send in flight cannot take them over.
    const run = await sendAcrossReconnect({ revokeRefresh: true, customerId: '2223334444' });
    // Not put off to the next look for a reauthorization (10 minutes): due at once, loaded afresh, sent to the new customer.
    expect(await run.draining).toEqual([expect.objectContaining({ result: 'credentials_replaced' }), expect.objectContaining({ result: 'delivered' })]);
    const ingests = run.ingests();
    expect(ingests.map((r) => r.answeredStatus)).toEqual([401, 200]);
    expect(JSON.stringify(ingests[1]!.body)).toContain('2223334444');
    await expectDeliveredWithNewGrant(run);
  });

  it("stores a rotated refresh token only over the credentials it came from, never over a reconnect's new grant", async () => {
    const acct = await createPlatformAccount(db, microsoft);
    const settings = platformSettings(microsoft);
    const platform = platformFor('microsoft-ads')!;
    const ctx = () => ({ signal: AbortSignal.timeout(10_000), timeoutMs: 5000 });
    const tokens = new AccessTokens({ db, settings, box, now: () => new Date() });

    // Unchanged credentials: Microsoft's rotated refresh token is kept.
    const current = toConnection((await findConnection(db, acct.accountId, 'microsoft-ads'))!, box);
    const first = current.credentials.refresh_token;
    await tokens.get(platform, current, ctx());
    const rotated = (await storedCredentials(acct.accountId, 'microsoft-ads')).credentials.refresh_token;
    expect(rotated).toBeTruthy();
    expect(rotated).not.toBe(first);

    // A send loaded the connection, then a reconnect stored a new grant before the send refreshed.
    const stale = toConnection((await findConnection(db, acct.accountId, 'microsoft-ads'))!, box);
    await connect(db, acct.accountId, microsoft);
    const reconnected = await storedCredentials(acct.accountId, 'microsoft-ads');
    tokens.forget(stale.id);
    await tokens.get(platform, stale, ctx());
    expect(await storedCredentials(acct.accountId, 'microsoft-ads')).toEqual(reconnected);
  });

  it('a connection test that passes recovers a waiting connection as a reconnect does: connected, destination.recovered, the waiting conversions sent', async () => {
    const acct = await createPlatformAccount(db, meta);
    await insertEndpoint(db, acct.accountId, 'https://hooks.example.com/cnv', KINDS, box.seal('whsec'));
    const settings = platformSettings(meta);
    const w = worker(settings);
    const waiting = await reportSignup(db, acct, meta);
    meta.revokeGrant();
    expect((await w.drain()).find((r) => r.eventActionId === waiting.actionId)?.result).toBe('waiting_for_reauthorization');
    expect((await storedCredentials(acct.accountId, 'meta')).status).toBe('reauthorization_required');

    // The user restores the token's access at Meta and tests the connection.
    meta.acceptStoredCredentials!();
    const { id } = (await findConnection(db, acct.accountId, 'meta'))!;
    const result = await testDestination(db, settings, acct.accountId, id);
    expect(result).toMatchObject({ destination: id, ok: true, message: expect.stringContaining('connected again') });
    expect((await storedCredentials(acct.accountId, 'meta')).status).toBe('connected');
    expect(await notificationKinds(acct.accountId)).toEqual(KINDS);

    // The waiting conversion is due now, not at its next 10-minute look.
    w.clock.advance(1000);
    expect((await w.drain()).find((r) => r.eventActionId === waiting.actionId)?.result).toBe('delivered');
    expect((await readOutcome(db, waiting.eventId)).event.status).toBe('completed');

    // A test of a connection that was not waiting recovers nothing and tells nobody.
    const again = await testDestination(db, settings, acct.accountId, id);
    expect(again.ok).toBe(true);
    expect(again.message).not.toContain('connected again');
    expect(await notificationKinds(acct.accountId)).toEqual(KINDS);
  });

  it('a reconnect makes due only the conversions that waited for it: not one waiting on a rate limit, not one a worker holds', async () => {
    const fx = await createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
    const [waiting, limited, held] = await Promise.all(['waiting', 'limited', 'held'].map((id) => insertReportedEvent(db, fx, { customerEventId: id })));
    const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    const set = (actionId: string, lastError: string, dueAt: Date, lockedUntil: Date | null) =>
      db.query('update outbox set last_error = $2, due_at = $3, locked_until = $4 where event_action_id = $1', [actionId, lastError, dueAt, lockedUntil]);
    await set(waiting!.actionIds[0]!, 'reauthorization_required', later(10), null);
    await set(limited!.actionIds[0]!, 'rate_limited: Quota exceeded.', later(30), null);
    await set(held!.actionIds[0]!, 'reauthorization_required', later(10), later(5));

    expect(await resumeDeliveries(db, fx.accountId, 'google-ads')).toBe(1);
    const rows = await db.query<{ event_action_id: string; due: boolean; locked_until: Date | null }>(
      'select event_action_id, due_at <= now() as due, locked_until from outbox where event_action_id = any($1::text[])',
      [[waiting!, limited!, held!].map((e) => e.actionIds[0]!)],
    );
    const of = (e: { actionIds: string[] }) => rows.find((r) => r.event_action_id === e.actionIds[0])!;
    expect(of(waiting!).due).toBe(true);
    expect(of(limited!).due).toBe(false);
    expect(of(held!)).toMatchObject({ due: false, locked_until: expect.any(Date) });
  });

  it('a reconnect that lands after the worker marked the connection, before it wrote the wait: the conversion goes out at once', async () => {
    const acct = await createPlatformAccount(db, microsoft);
    const { eventId, actionId } = await reportSignup(db, acct, microsoft);
    microsoft.revokeGrant();
    // The refresh is refused; right after the worker marked the connection (its own transaction), the user reconnects.
    // The worker still holds the row, so the reconnect's resumeDeliveries cannot make it due.
    let resumed: number | undefined;
    const hooked = afterTransactionRunning(db, "set status = 'reauthorization_required'", async () => {
      resumed = await reconnect(db, acct.accountId, microsoft);
    });
    const w = worker(platformSettings(microsoft), hooked);
    const results = await w.drain();
    expect(resumed).toBe(0);
    expect((await storedCredentials(acct.accountId, 'microsoft-ads')).status).toBe('connected');
    // Written as a wait, due at once (the connection is connected again): sent in the same drain with the new grant.
    expect(results.filter((r) => r.eventActionId === actionId).map((r) => r.result)).toEqual(['waiting_for_reauthorization', 'delivered']);
    const { event, actions } = await readOutcome(db, eventId);
    expect(event.status).toBe('completed');
    expect(actions[0]).toMatchObject({ status: 'delivered', attempts: 1, error: null });
  });

  it('a connection whose credentials hold no refresh token is marked reauthorization_required, and its conversions wait', async () => {
    const acct = await createPlatformAccount(db, microsoft);
    await upsertDestination(db, acct.accountId, 'microsoft-ads', microsoft.settings, sealCredentials(box, {}));
    const { actionId } = await reportSignup(db, acct, microsoft);
    const w = worker(platformSettings(microsoft));
    // Not looked at again and again while the destination shows connected: it says what it needs, and the row waits.
    expect((await w.drain()).filter((r) => r.eventActionId === actionId).map((r) => r.result)).toEqual(['waiting_for_reauthorization']);
    expect((await storedCredentials(acct.accountId, 'microsoft-ads')).status).toBe('reauthorization_required');
    const [row] = await db.query<{ due_at: Date }>('select due_at from outbox where event_action_id = $1', [actionId]);
    expect(row!.due_at.getTime()).toBeGreaterThan(w.clock.now().getTime() + 9 * 60_000);
  });
});

/**
 * A reconnect in progress (its transaction not yet committed) while a worker writes the wait of a row it held: the
 * worker waits for it and writes the row due at once. PostgreSQL only: the embedded store runs one transaction at a
 * time, so the two cannot overlap there (the case of a reconnect between the mark and the write is tested above).
 */
describe.each(DATABASE_KINDS.filter((k) => k.name === 'postgres'))('a reconnect committing while the worker writes on $name', (kind) => {
  let handles: Awaited<ReturnType<typeof openTwoHandles>>;
  let microsoft: PlatformFake;
  beforeAll(async () => {
    [handles, microsoft] = await Promise.all([openTwoHandles(kind), startPlatform('microsoft-ads')]);
  });
  afterAll(async () => {
    await Promise.all([handles.close(), microsoft.close()]);
  });

  it('the waiting conversion is due at once, and goes out', async () => {
    const { first, second } = handles;
    const acct = await createPlatformAccount(first, microsoft);
    const { actionId } = await reportSignup(first, acct, microsoft);
    microsoft.revokeGrant();
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    let reconnecting!: Promise<number>;
    let reconnectPid = 0;
    // As the worker begins writing the row's wait, a reconnect on another pool stores the new grant and resumes the
    // waiting rows (not this one: the worker holds it), and has not committed yet.
    const hooked = beforeStatement(first, 'select id from events where id = any($1::text[]) order by id for update', async () => {
      let started!: () => void;
      const upserted = new Promise<void>((resolve) => (started = resolve));
      reconnecting = second.transaction(async (tx) => {
        reconnectPid = (await tx.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;
        await upsertDestination(tx, acct.accountId, 'microsoft-ads', microsoft.settings, sealCredentials(box, microsoft.newCredentials()));
        const resumed = await resumeDeliveries(tx, acct.accountId, 'microsoft-ads');
        started();
        await committing;
        return resumed;
      });
      await upserted;
    });
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...microsoft.env });
    const w = startDeliveryWorker({ db: hooked, settings, log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    let drained = false;
    const draining = w.drain().finally(() => (drained = true));
    // The reconnect commits once the worker has written its outcome, or waits for the reconnect's transaction.
    for (;;) {
      const [waiting] = await second.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))', [reconnectPid]);
      if (drained || waiting!.n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    commit();
    expect(await reconnecting).toBe(0);
    const results = await draining;
    await w.stop();
    const [row] = await first.query<{ status: string }>('select status from destinations where account_id = $1', [acct.accountId]);
    expect(row!.status).toBe('connected');
    expect(results.filter((r) => r.eventActionId === actionId).map((r) => r.result)).toEqual(['waiting_for_reauthorization', 'delivered']);
  });
});
