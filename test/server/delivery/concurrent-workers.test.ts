import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { secretBox } from '../../../src/server/db/secret-box';
import { findConnection, openCredentials, toConnection } from '../../../src/server/destinations';
import { loadSettings, type Settings } from '../../../src/server/settings';
import { TEST_SECRET_KEY, createDeliveryFixture, insertReportedEvent, memoryLog, openTwoHandles, settingsFor } from './fixtures';
import { createPlatformAccount, reportSignup, startPlatform, type PlatformFake } from './platforms';

describe.each(DATABASE_KINDS)('two delivery workers on one $name database', (kind) => {
  let handles: Awaited<ReturnType<typeof openTwoHandles>>;
  let fake: FakeGoogle;
  beforeAll(async () => {
    [handles, fake] = await Promise.all([openTwoHandles(kind), startFakeGoogle()]);
  });
  afterAll(async () => {
    await Promise.all([handles.close(), fake.close()]);
  });

  it('never send the same row twice, and together deliver every row', async () => {
    const fx = await createDeliveryFixture(handles.first, { api: 'data_manager', refreshToken: fake.issueRefreshToken() });
    const count = 60;
    const eventIds: string[] = [];
    for (let i = 0; i < count; i++) eventIds.push((await insertReportedEvent(handles.first, fx, { customerEventId: `signup-${i}` })).eventId);

    // Two "processes": separate connection pools on PostgreSQL, small batches so their claims interleave.
    const settings = settingsFor('http://legacy.invalid', {}, fake);
    const a = startDeliveryWorker({ db: handles.first, settings, log: memoryLog(), autoStart: false, batchSize: 4 });
    const b = startDeliveryWorker({ db: handles.second, settings, log: memoryLog(), autoStart: false, batchSize: 4 });
    const [fromA, fromB] = await Promise.all([a.drain(), b.drain()]);
    await Promise.all([a.stop(), b.stop()]);

    expect(fromA.length + fromB.length).toBe(count);
    expect([...fromA, ...fromB].filter((r) => r.result !== 'delivered')).toEqual([]);
    const ingests = fake.server.requests.filter((r) => r.path === '/v1/events:ingest');
    const orderIds = ingests.flatMap((r) => (r.body.events as Array<{ transactionId: string }>).map((e) => e.transactionId));
    expect(orderIds).toHaveLength(count);
    expect(new Set(orderIds).size).toBe(count);
    const statuses = await handles.first.query<{ status: string; n: number }>(
      'select status, count(*)::int as n from events where id = any($1::text[]) group by status',
      [eventIds],
    );
    expect(statuses).toEqual([{ status: 'completed', n: count }]);
    if (kind.name === 'postgres') {
      // Both processes took part (otherwise the test would not show anything about concurrency).
      expect(fromA.length).toBeGreaterThan(0);
      expect(fromB.length).toBeGreaterThan(0);
    }
  });
});

/**
 * Microsoft issues a new refresh token with every refresh, and each process keeps its access token in memory: two
 * processes sending for one connection must not refresh in turn forever (each refresh rotated the stored refresh
 * token, so the other process's cached token no longer matched it). Separate workers have separate token caches, so
 * this holds on the embedded store too (one handle, two workers).
 */
describe.each(DATABASE_KINDS)('two delivery workers sharing a Microsoft Ads connection on $name', (kind) => {
  let handles: Awaited<ReturnType<typeof openTwoHandles>>;
  let microsoft: PlatformFake;
  const box = secretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));
  beforeAll(async () => {
    [handles, microsoft] = await Promise.all([openTwoHandles(kind), startPlatform('microsoft-ads')]);
  });
  afterAll(async () => {
    await Promise.all([handles.close(), microsoft.close()]);
  });

  const workers = (settings: Settings) => [
    startDeliveryWorker({ db: handles.first, settings, log: memoryLog(), autoStart: false }),
    startDeliveryWorker({ db: handles.second, settings, log: memoryLog(), autoStart: false }),
  ] as const;

  it('refresh the rotating grant once, then both use the access token stored with it (sealed), round after round', async () => {
    const acct = await createPlatformAccount(handles.first, microsoft);
    const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...microsoft.env });
    const [a, b] = workers(settings);
    const refreshesBefore = microsoft.refreshes().length;
    const sendsBefore = microsoft.sends().length;
    for (let i = 0; i < 6; i++) {
      await reportSignup(handles.first, acct, microsoft);
      expect((await (i % 2 === 0 ? a : b).drain()).map((r) => r.result)).toEqual(['delivered']);
    }
    await Promise.all([a.stop(), b.stop()]);
    // One refresh: the second process took the access token the first stored with the rotated refresh token.
    expect(microsoft.refreshes().length - refreshesBefore).toBe(1);
    expect(microsoft.sends().length - sendsBefore).toBe(6);

    // The access token is stored sealed with the credentials, never in clear.
    const [row] = await handles.first.query<{ credentials: string }>('select credentials from destinations where account_id = $1', [acct.accountId]);
    const opened = openCredentials(box, row!.credentials);
    expect(opened.oauth_access_token).toBeTruthy();
    expect(row!.credentials).not.toContain(opened.oauth_access_token!);
    expect(row!.credentials).not.toContain(opened.refresh_token!);
    // A platform never sees it among the connection's credentials.
    expect(Object.keys(toConnection((await findConnection(handles.first, acct.accountId, 'microsoft-ads'))!, box).credentials)).toEqual(['refresh_token']);
  });

  it('an access token taken from the store and refused is not taken again: the process refreshes, and the conversion goes out', async () => {
    const acct = await createPlatformAccount(handles.first, microsoft);
    const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...microsoft.env });
    const [a, b] = workers(settings);
    await reportSignup(handles.first, acct, microsoft);
    expect((await a.drain()).map((r) => r.result)).toEqual(['delivered']); // refreshed, stored with its access token
    microsoft.revokeAccessTokens();
    const refreshesBefore = microsoft.refreshes().length;
    await reportSignup(handles.first, acct, microsoft);
    expect((await b.drain()).map((r) => r.result)).toEqual(['delivered']);
    await Promise.all([a.stop(), b.stop()]);
    expect(microsoft.refreshes().length - refreshesBefore).toBe(1);
    expect((await findConnection(handles.first, acct.accountId, 'microsoft-ads'))!.status).toBe('connected');
  });
});
