/**
 * Google's two APIs need different OAuth scopes: the Data Manager API `datamanager`, the legacy Google Ads API
 * `adwords`. The fakes refuse a token without the scope of their API as Google does (403 PERMISSION_DENIED,
 * ACCESS_TOKEN_SCOPE_INSUFFICIENT); delivery then asks for a new sign-in, saying which access is missing, and a grant
 * given both scopes is refreshed with both and delivers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { startFakeGoogleAds, type FakeGoogleAds } from '../../../src/demo/fake-google-ads';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { createDeliveryFixture, insertReportedEvent, memoryLog, settingsFor, steppableClock } from './fixtures';

const DATA_MANAGER = 'https://www.googleapis.com/auth/datamanager';
const ADWORDS = 'https://www.googleapis.com/auth/adwords';

describe.each(DATABASE_KINDS)('Google OAuth scopes at delivery on $name', (kind) => {
  let db: Database;
  let ads: FakeGoogleAds;
  let google: FakeGoogle;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [db, google] = await Promise.all([kind.open(), startFakeGoogle()]);
    ads = await startFakeGoogleAds({ scopesOf: (token) => google.scopesOf(token) });
  });
  afterAll(async () => {
    await Promise.all([db.close(), ads.close(), google.close()]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  function drain() {
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const w = startDeliveryWorker({ db, settings: settingsFor(ads.url, {}, google), log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    workers.push(w);
    return w.drain();
  }

  const actionOf = async (actionId: string) =>
    (await db.query<{ status: string; error: { code: string; message: string; hint?: string } | null }>('select status, error from event_actions where id = $1', [actionId]))[0]!;
  const destinationStatus = async (accountId: string) =>
    (await db.query<{ status: string }>('select status from destinations where account_id = $1', [accountId]))[0]!.status;
  const tokenRequests = () => google.server.requests.filter((r) => r.path === '/token');

  it('a legacy connection signed in for the Data Manager API only waits for a new sign-in that names the missing access', async () => {
    // A grant as every Google connection had before the scope was chosen per connection: the Data Manager scope alone.
    const fx = await createDeliveryFixture(db, { api: 'google_ads_api', refreshToken: google.issueRefreshToken(DATA_MANAGER) });
    const { actionIds } = await insertReportedEvent(db, fx);
    const before = ads.requests.length;
    await drain();
    const uploads = ads.requests.slice(before).filter((r) => r.path.endsWith(':uploadClickConversions'));
    // Refused for its scope, refreshed once (which cannot add a scope), refused again.
    expect(uploads.map((r) => r.answeredStatus)).toEqual([403, 403]);
    expect(uploads[0]!.problems).toEqual([`the access token lacks the scope ${ADWORDS}`]);
    expect(await destinationStatus(fx.accountId)).toBe('reauthorization_required');
    const action = await actionOf(actionIds[0]!);
    expect(action.status).toBe('queued');
    expect(action.error).toMatchObject({ code: 'reauthorization_required' });
    expect(action.error!.message).toContain("cnv's authorization does not include the Google Ads API");
    expect(action.error!.message).toContain(ADWORDS);
    expect(action.error!.hint).toContain('choosing the Google Ads API before signing in');
  });

  it('a grant given both scopes is refreshed with both and delivers through the Google Ads API', async () => {
    const both = `${DATA_MANAGER} ${ADWORDS}`;
    const fx = await createDeliveryFixture(db, { api: 'google_ads_api', refreshToken: google.issueRefreshToken(both), grantedScope: both });
    const { actionIds } = await insertReportedEvent(db, fx);
    const tokensBefore = tokenRequests().length;
    const before = ads.requests.length;
    await drain();
    const refresh = tokenRequests().slice(tokensBefore).at(-1)!;
    expect(refresh.body).toMatchObject({ grant_type: 'refresh_token', scope: both });
    const uploads = ads.requests.slice(before).filter((r) => r.path.endsWith(':uploadClickConversions'));
    expect(uploads.map((r) => r.answeredStatus)).toEqual([200]);
    expect((await actionOf(actionIds[0]!)).status).toBe('delivered');
  });

  it('a Data Manager connection whose grant lacks the Data Manager scope waits for a new sign-in too', async () => {
    const fx = await createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken(ADWORDS), grantedScope: ADWORDS });
    const { actionIds } = await insertReportedEvent(db, fx);
    const before = google.server.requests.length;
    await drain();
    const ingests = google.server.requests.slice(before).filter((r) => r.path === '/v1/events:ingest');
    expect(ingests.map((r) => r.answeredStatus)).toEqual([403, 403]);
    expect(await destinationStatus(fx.accountId)).toBe('reauthorization_required');
    expect((await actionOf(actionIds[0]!)).error!.message).toContain("does not include Google's Data Manager API");
  });
});
