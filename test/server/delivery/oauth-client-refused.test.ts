/**
 * A platform's token endpoint refuses the service's own OAuth client (`invalid_client`: the operator's
 * CNV_<PLATFORM>_OAUTH_CLIENT_SECRET is wrong, expired or rotated). Reconnecting cannot fix that, and nothing may be
 * lost: the conversions and adjustments wait, queued with the reason (naming the settings, never their values), no
 * attempt counted and no `event.failed`; the connection stays `connected` and nobody's endpoints are told; the log says
 * it once per platform per interval; a service started with a working client sends what waited.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { REAUTHORIZATION_RECHECK_MS } from '../../../src/server/delivery/round';
import { clientRefusals, findConnection, oauthClientSetting } from '../../../src/server/destinations';
import { loadSettings } from '../../../src/server/settings';
import { getDestination, testDestination } from '../../../src/server/api/destinations';
import { insertAdjustment } from '../../../src/server/webhook/adjustment-sql';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { TEST_SECRET_KEY, createDeliveryFixture, insertReportedEvent, memoryLog, readOutcome, settingsFor, steppableClock } from './fixtures';
import { createPlatformAccount, reportSignup, type PlatformFake } from './platforms';
import { usePlatformWorkers } from './platform-workers';

/** The secret the operator's settings hold after the client's was rotated at Google. */
const STALE_SECRET = 'stale-client-secret-value';

describe.each(DATABASE_KINDS)("a platform refusing the service's OAuth client on $name", (kind) => {
  let db: Database;
  let google: FakeGoogle;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [db, google] = await Promise.all([kind.open(), startFakeGoogle()]);
  });
  afterAll(async () => {
    await Promise.all([db.close(), google.close()]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  /** A service's worker: with the client secret Google no longer takes (`stale`), or with the right one. */
  function worker(stale: boolean) {
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const log = memoryLog();
    const settings = settingsFor('http://legacy.invalid', stale ? { CNV_GOOGLE_OAUTH_CLIENT_SECRET: STALE_SECRET } : {}, google);
    const w = startDeliveryWorker({ db, settings, log, now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    workers.push(w);
    return Object.assign(w, { clock, log, settings });
  }
  const account = () => createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
  const notificationKinds = async (accountId: string) =>
    (await db.query<{ kind: string }>('select kind from notifications where account_id = $1 order by id', [accountId])).map((r) => r.kind);
  const refusedLines = (log: ReturnType<typeof memoryLog>) => log.lines.filter((l) => /refused this service's OAuth client/.test(l.msg ?? ''));

  it('keeps the conversions queued with the reason, fails none, and sends them once a service starts with a working client', async () => {
    const [a, b] = [await account(), await account()];
    const ea = await insertReportedEvent(db, a, { customerEventId: 'client-a' });
    const eb = await insertReportedEvent(db, b, { customerEventId: 'client-b' });

    const stale = worker(true);
    expect((await stale.drain()).map((r) => r.result)).toEqual(['waiting_for_oauth_client', 'waiting_for_oauth_client']);
    for (const { eventId } of [ea, eb]) {
      const outcome = await readOutcome(db, eventId);
      expect(outcome.event.status).toBe('queued');
      expect(outcome.actions[0]).toMatchObject({
        status: 'queued',
        attempts: 0,
        error: {
          code: 'oauth_client_refused',
          message: expect.stringMatching(/Google Ads refused this cnv service's own OAuth client \(invalid_client, HTTP 401\).*the service's operator must\. This conversion waits/s),
          hint: expect.stringContaining('CNV_GOOGLE_OAUTH_CLIENT_ID and CNV_GOOGLE_OAUTH_CLIENT_SECRET'),
          retrying: true,
        },
      });
      expect(outcome.outbox[0]!.attempts).toBe(0);
    }
    // Not the connection's fault: it stays connected, and no endpoint of the accounts is told (nor one event.failed).
    for (const fx of [a, b]) {
      expect((await findConnection(db, fx.accountId, 'google-ads'))!.status).toBe('connected');
      expect(await notificationKinds(fx.accountId)).toEqual([]);
    }
    // Shown on the destination, as the API gives it.
    const destination = await getDestination(db, a.accountId, (await findConnection(db, a.accountId, 'google-ads'))!.id);
    expect(destination).toMatchObject({ status: 'connected', problem: { code: 'oauth_client_refused', hint: expect.stringContaining('CNV_GOOGLE_OAUTH_CLIENT_SECRET') } });
    expect((await clientRefusals(db)).has('google-ads')).toBe(true);
    // Said once for the platform (two connections refused), never with the secret or a token.
    expect(refusedLines(stale.log)).toHaveLength(1);
    expect(refusedLines(stale.log)[0]).toMatchObject({ level: 'error', obj: { destination: 'google-ads', code: 'oauth_client_refused' } });
    const logged = JSON.stringify(stale.log.lines);
    expect(logged).not.toContain(STALE_SECRET);
    expect(logged).not.toContain(google.client.secret);
    expect(logged).not.toMatch(/-rt-|-at-/);

    // Looked at again as a reauthorization wait is, for longer than 12 attempts would last: never failed, never counted.
    for (let i = 0; i < 14; i++) {
      stale.clock.advance(REAUTHORIZATION_RECHECK_MS);
      expect((await stale.drain()).map((r) => r.result)).toEqual(['waiting_for_oauth_client', 'waiting_for_oauth_client']);
    }
    expect((await readOutcome(db, ea.eventId)).actions[0]).toMatchObject({ status: 'queued', attempts: 0 });
    expect(await notificationKinds(a.accountId)).toEqual([]);
    // Once per interval, not once per round of each connection.
    expect(refusedLines(stale.log)).toHaveLength(15);
    await stale.stop();

    // The operator sets the new secret and restarts: a new service on the same store sends them at once.
    const fixed = worker(false);
    expect((await fixed.drain()).map((r) => r.result).sort()).toEqual(['delivered', 'delivered']);
    for (const { eventId } of [ea, eb]) expect((await readOutcome(db, eventId)).actions[0]).toMatchObject({ status: 'delivered', attempts: 1, error: null });
    expect((await clientRefusals(db)).has('google-ads')).toBe(false);
    expect((await getDestination(db, a.accountId, destination.id)).problem).toBeUndefined();
  });

  it('shows the refusal again at the next refusal after another process forgot it, though the log waits its interval', async () => {
    const fx = await account();
    await insertReportedEvent(db, fx, { customerEventId: 'client-again-1' });
    const stale = worker(true);
    expect((await stale.drain()).map((r) => r.result)).toEqual(['waiting_for_oauth_client']);
    // Another process sharing the store refreshed a token with a working client meanwhile: it forgot the record.
    await db.query("delete from service_facts where name like 'oauth_client_refused:%'");
    stale.clock.advance(60_000);
    await insertReportedEvent(db, fx, { customerEventId: 'client-again-2' });
    expect((await stale.drain()).map((r) => r.result)).toEqual(['waiting_for_oauth_client']);
    expect((await clientRefusals(db)).has('google-ads')).toBe(true);
    expect(refusedLines(stale.log)).toHaveLength(1);
    // A start with the working client sends what waited (and leaves nothing queued for the tests after this one).
    await stale.stop();
    expect((await worker(false).drain()).map((r) => r.result)).toEqual(['delivered', 'delivered']);
  });

  it('keeps adjustments waiting the same way, and applies them after the restart', async () => {
    const fx = await account();
    const event = await insertReportedEvent(db, fx, { customerEventId: 'client-adj' });
    expect((await worker(false).drain()).map((r) => r.result)).toEqual(['delivered']);
    const recorded = await db.transaction((tx) =>
      insertAdjustment(tx, { siteId: fx.site.id, adjustmentId: 'r-client-adj', customerEventId: 'client-adj', type: 'restate', value: 12, currency: 'EUR', occurredAt: new Date() }),
    );
    expect(recorded).toMatchObject({ ok: true, inserted: true });
    const resultOf = async () =>
      (await db.query<{ status: string; attempts: number; reason: string | null; error: { code: string } | null }>(
        'select r.status, r.attempts, r.reason, r.error from adjustment_results r join event_actions a on a.id = r.event_action_id where a.event_id = $1',
        [event.eventId],
      ))[0]!;

    const stale = worker(true);
    // The access token the first service cached is gone with it: the refresh is refused.
    expect((await stale.drain()).map((r) => r.result)).toEqual(['waiting_for_oauth_client']);
    expect(await resultOf()).toMatchObject({ status: 'queued', attempts: 0, error: { code: 'oauth_client_refused' }, reason: expect.stringContaining('CNV_GOOGLE_OAUTH_CLIENT_SECRET') });
    await stale.stop();

    expect((await worker(false).drain()).map((r) => r.result)).toEqual(['adjusted']);
    expect(await resultOf()).toMatchObject({ status: 'adjusted', attempts: 1 });
  });

  it('stops showing the refusal once a refresh works, whoever recorded it (a connection test with another client)', async () => {
    const fx = await account();
    const row = (await findConnection(db, fx.accountId, 'google-ads'))!;
    // A worker that started before the test below (its start's forgetting is past), with a client that works.
    const w = worker(false);
    await w.drain();
    const stale = settingsFor('http://legacy.invalid', { CNV_GOOGLE_OAUTH_CLIENT_SECRET: STALE_SECRET }, google);
    expect(await testDestination(db, stale, fx.accountId, row.id, '987654321')).toMatchObject({ ok: false, error: { code: 'oauth_client_refused' } });
    expect((await getDestination(db, fx.accountId, row.id)).problem).toMatchObject({ code: 'oauth_client_refused' });
    await insertReportedEvent(db, fx, { customerEventId: 'client-after-test' });
    expect((await w.drain()).map((r) => r.result)).toEqual(['delivered']);
    expect((await getDestination(db, fx.accountId, row.id)).problem).toBeUndefined();
  });

  // The operator replaced the OAuth client on purpose: Google refuses the old client's grant to the new client with
  // 401 `unauthorized_client`. The service's client works (the fake accepts it); only this connection must be made
  // again, whether it recorded the client its grant was issued to or (made before that was recorded) not: for
  // `unauthorized_client` says the client authenticated but may not use this grant (RFC 6749 §5.2; Microsoft says it
  // when the ad account's organization removed or disabled the app), never that the operator's settings are wrong.
  it.each([
    { connection: 'a connection that recorded the replaced client', oauthClientId: 'replaced-client-id' as string | undefined },
    { connection: 'a connection made before the client was recorded', oauthClientId: undefined },
  ])('asks for a reconnect, not the operator, when the grant was issued to a replaced client: $connection', async ({ oauthClientId }) => {
    const refreshToken = google.issueRefreshToken(undefined, 'replaced-client-id');
    const fx = await createDeliveryFixture(db, { api: 'data_manager', refreshToken, ...(oauthClientId ? { oauthClientId } : {}) });
    const event = await insertReportedEvent(db, fx, { customerEventId: `client-replaced-${oauthClientId ?? 'unrecorded'}` });
    const w = worker(false);
    expect((await w.drain()).map((r) => r.result)).toEqual(['waiting_for_reauthorization']);
    expect((await findConnection(db, fx.accountId, 'google-ads'))!.status).toBe('reauthorization_required');
    expect((await readOutcome(db, event.eventId)).actions[0]).toMatchObject({ status: 'queued', attempts: 0, error: { code: 'reauthorization_required' } });
    expect((await clientRefusals(db)).has('google-ads')).toBe(false);
    expect(refusedLines(w.log)).toEqual([]);
  });

  it("answers a connection test with the operator's setting to fix, and leaves the destination connected", async () => {
    const fx = await account();
    const row = (await findConnection(db, fx.accountId, 'google-ads'))!;
    const settings = settingsFor('http://legacy.invalid', { CNV_GOOGLE_OAUTH_CLIENT_SECRET: STALE_SECRET }, google);
    const answer = await testDestination(db, settings, fx.accountId, row.id, '987654321');
    expect(answer).toMatchObject({ destination: row.id, ok: false, error: { code: 'oauth_client_refused' }, message: expect.stringContaining("the service's operator must") });
    expect(JSON.stringify(answer)).not.toContain(STALE_SECRET);
    expect((await findConnection(db, fx.accountId, 'google-ads'))!.status).toBe('connected');
  });
});

/** Every platform that signs in with the service's OAuth client, against its strict fake refusing a stale secret. */
const OAUTH_PLATFORMS = ['google-ads', 'microsoft-ads', 'linkedin'] as const;

describe.each(DATABASE_KINDS)("each platform refusing the service's OAuth client on $name", (kind) => {
  const platforms = usePlatformWorkers(kind, OAUTH_PLATFORMS);

  function worker(platform: PlatformFake, stale: boolean) {
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const log = memoryLog();
    const env = { CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...platform.env, ...(stale ? { [oauthClientSetting(platform.type, 'SECRET')]: STALE_SECRET } : {}) };
    const settings = loadSettings(env);
    const w = startDeliveryWorker({ db: platforms.db, settings, log, now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    return Object.assign(w, { clock, log, settings });
  }

  it.each(OAUTH_PLATFORMS)('%s: the conversion waits without an attempt or a failure, and goes out after a restart with the right secret', async (type) => {
    const p = platforms.fake(type);
    const acct = await createPlatformAccount(platforms.db, p);
    const report = await reportSignup(platforms.db, acct, p);
    const resultOf = (results: Array<{ eventActionId: string; result: string }>) => results.find((r) => r.eventActionId === report.actionId)?.result;

    const stale = worker(p, true);
    try {
      const refusedBefore = p.refreshes().length;
      expect(resultOf(await stale.drain())).toBe('waiting_for_oauth_client');
      expect(p.refreshes().length - refusedBefore).toBe(1);
      // Past the 12 attempts a retried outage gets, in rechecks: still waiting.
      for (let i = 0; i < 13; i++) {
        stale.clock.advance(REAUTHORIZATION_RECHECK_MS);
        await stale.drain();
      }
      const outcome = await readOutcome(platforms.db, report.eventId);
      expect(outcome.actions[0]).toMatchObject({
        status: 'queued',
        attempts: 0,
        error: { code: 'oauth_client_refused', hint: expect.stringContaining(oauthClientSetting(type, 'SECRET')) },
      });
      expect(JSON.stringify(stale.log.lines)).not.toContain(STALE_SECRET);
      expect(await platforms.db.query('select kind from notifications where account_id = $1', [acct.accountId])).toEqual([]);
      const connection = (await findConnection(platforms.db, acct.accountId, type))!;
      expect(connection.status).toBe('connected');
      // A connection test says the same, not "no access token could be obtained right now".
      const tested = await testDestination(platforms.db, stale.settings, acct.accountId, connection.id, type === 'google-ads' ? '987654321' : undefined);
      expect(tested).toMatchObject({ ok: false, error: { code: 'oauth_client_refused' }, message: expect.stringContaining(oauthClientSetting(type, 'SECRET')) });
    } finally {
      await stale.stop();
    }

    const fixed = worker(p, false);
    try {
      expect(resultOf(await fixed.drain())).toBe('delivered');
      expect((await readOutcome(platforms.db, report.eventId)).actions[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    } finally {
      await fixed.stop();
    }
  });
});
