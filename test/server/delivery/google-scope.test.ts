/**
 * Google's two APIs need different OAuth scopes: the Data Manager API `datamanager`, the legacy Google Ads API
 * `adwords`. The fakes refuse a token without the scope of their API as Google does (403 PERMISSION_DENIED,
 * ACCESS_TOKEN_SCOPE_INSUFFICIENT); delivery then asks for a new sign-in, saying which access is missing, and a grant
 * given both scopes is refreshed with both and delivers. A connection test goes through the connection's own API, so it
 * finds the same refusals before the first conversion does.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { startFakeGoogleAds, type FakeGoogleAds } from '../../../src/demo/fake-google-ads';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { testDestination } from '../../../src/server/api/destinations/destinations';
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

  describe('the connection test goes through the API the connection sends through', () => {
    const destinationOf = async (accountId: string) =>
      (await db.query<{ id: string }>('select id from destinations where account_id = $1', [accountId]))[0]!.id;
    const legacyUploadsSince = (before: number) => ads.requests.slice(before).filter((r) => r.path.endsWith(':uploadClickConversions'));

    it('a legacy connection signed in for the Data Manager API only fails its test, naming the missing access, and waits for a new sign-in', async () => {
      const fx = await createDeliveryFixture(db, { api: 'google_ads_api', refreshToken: google.issueRefreshToken(DATA_MANAGER) });
      const before = ads.requests.length;
      const ingestsBefore = google.server.requests.filter((r) => r.path === '/v1/events:ingest').length;
      const result = await testDestination(db, settingsFor(ads.url, {}, google), fx.accountId, await destinationOf(fx.accountId), '987654321');
      expect(result.ok).toBe(false);
      expect(result.error).toMatchObject({ code: 'reauthorization_required' });
      expect(result.message).toContain("cnv's authorization does not include the Google Ads API");
      expect(result.message).toContain(ADWORDS);
      // Asked of the Google Ads API, not of the Data Manager API (which this grant would pass).
      expect(legacyUploadsSince(before).map((r) => r.answeredStatus)).toEqual([403]);
      expect(google.server.requests.filter((r) => r.path === '/v1/events:ingest').length).toBe(ingestsBefore);
      expect(await destinationStatus(fx.accountId)).toBe('reauthorization_required');
    });

    it('a legacy connection with both scopes passes through a validate-only upload that Google does not keep', async () => {
      const both = `${DATA_MANAGER} ${ADWORDS}`;
      const fx = await createDeliveryFixture(db, { api: 'google_ads_api', refreshToken: google.issueRefreshToken(both), grantedScope: both });
      const before = ads.requests.length;
      const result = await testDestination(db, settingsFor(ads.url, {}, google), fx.accountId, await destinationOf(fx.accountId), '987654321');
      expect(result).toMatchObject({ ok: true });
      expect(result.message).toContain('customers/1234567890/conversionActions/987654321');
      const [upload] = legacyUploadsSince(before);
      expect(upload).toMatchObject({ answeredStatus: 200, problems: [] });
      expect(upload!.body).toMatchObject({ validateOnly: true, partialFailure: true, conversions: [{ conversionAction: 'customers/1234567890/conversionActions/987654321' }] });
      expect(upload!.headers.authorization).toMatch(/^Bearer /);
      // Validated, not executed: Google holds no conversion from a test.
      expect(ads.held('customers/1234567890/conversionActions/987654321', upload!.body.conversions[0].orderId)).toBeUndefined();
      expect(await destinationStatus(fx.accountId)).toBe('connected');
    });

    it("a refusal of the test's made-up click alone passes; a refusal of the customer fails with Google's words and what to do", async () => {
      const both = `${DATA_MANAGER} ${ADWORDS}`;
      const fx = await createDeliveryFixture(db, { api: 'google_ads_api', refreshToken: google.issueRefreshToken(both), grantedScope: both });
      const id = await destinationOf(fx.accountId);
      ads.respondWith({ kind: 'rowError', code: 'UNPARSEABLE_GCLID' });
      expect(await testDestination(db, settingsFor(ads.url, {}, google), fx.accountId, id, '987654321')).toMatchObject({ ok: true });
      ads.respondWith({ kind: 'rowError', code: 'CUSTOMER_NOT_ALLOWLISTED_FOR_THIS_FEATURE', message: 'Customer is not allowlisted for accessing this feature.' });
      const refused = await testDestination(db, settingsFor(ads.url, {}, google), fx.accountId, id, '987654321');
      expect(refused).toMatchObject({ ok: false, error: { code: 'CUSTOMER_NOT_ALLOWLISTED_FOR_THIS_FEATURE' } });
      expect(refused.error!.hint).toContain("Data Manager API");
      // Not a credential problem: the connection stays connected.
      expect(await destinationStatus(fx.accountId)).toBe('connected');
    });

    it('a Data Manager connection whose grant lacks the Data Manager scope fails its test and waits for a new sign-in', async () => {
      const fx = await createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken(ADWORDS), grantedScope: ADWORDS });
      const result = await testDestination(db, settingsFor(ads.url, {}, google), fx.accountId, await destinationOf(fx.accountId), '987654321');
      expect(result).toMatchObject({ ok: false, error: { code: 'reauthorization_required' } });
      expect(result.message).toContain("does not include Google's Data Manager API");
      expect(await destinationStatus(fx.accountId)).toBe('reauthorization_required');
    });

    it('without a conversion action to validate against, the legacy test says what it needs and asks Google nothing', async () => {
      const both = `${DATA_MANAGER} ${ADWORDS}`;
      const fx = await createDeliveryFixture(db, { api: 'google_ads_api', refreshToken: google.issueRefreshToken(both), grantedScope: both });
      const before = ads.requests.length;
      const result = await testDestination(db, settingsFor(ads.url, {}, google), fx.accountId, await destinationOf(fx.accountId));
      expect(result).toMatchObject({ ok: false, error: { code: 'conversion_action_missing' } });
      expect(legacyUploadsSince(before)).toEqual([]);
    });
  });
});
