/**
 * Reddit and TikTok through the whole service, against their strict fakes: connected by the hosted handoff, a flow
 * through the REST API, a browser snapshot with both click ids and cookies, the signed webhook report, and the delivery
 * worker on a clock the test steps (no timing assertions): delivered with click ids, consent denied, a 429 then
 * delivered, a permanent error with its hint, a conversion the browser pixel already sent (a duplicate), and a hanging
 * Reddit account that does not hold up a healthy TikTok one.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { cookieHeaderFrom } from './support/browser-cookies';
import { newToken, signedReport, snapshotBody } from './support/fixtures';
import { memoryLog, steppableClock } from './delivery/fixtures';
import { snapshotsPath } from '../../src/protocol/collector';
import { adjustmentPath, conversionPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { sha256Hex } from '../../src/server/destinations/hashing';
import { startDeliveryWorker, type DeliveryWorker } from '../../src/server/delivery/worker';
import { FAKE_REDDIT_PIXEL, FAKE_REDDIT_TOKEN, startFakeReddit, type FakeReddit } from '../../src/demo/fakes/reddit';
import { FAKE_TIKTOK_PIXEL, FAKE_TIKTOK_TOKEN, startFakeTikTok, type FakeTikTok } from '../../src/demo/fakes/tiktok';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const ORIGIN = 'https://www.example.com';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) cnv-test';

describe('Reddit and TikTok through the service', () => {
  let svc: RestService;
  let reddit: FakeReddit;
  let tiktok: FakeTikTok;
  let secret: string;
  const workers: DeliveryWorker[] = [];
  let seq = 0;

  beforeAll(async () => {
    [reddit, tiktok] = await Promise.all([startFakeReddit(), startFakeTikTok()]);
    svc = await createRestService(DATABASE_KINDS[0]!, {
      CNV_REDDIT_API_BASE: reddit.url, CNV_TIKTOK_API_BASE: tiktok.url,
      CNV_REDDIT_OAUTH_AUTHORIZE_URL: reddit.authorizeUrl, CNV_REDDIT_OAUTH_TOKEN_URL: reddit.tokenUrl,
      CNV_REDDIT_OAUTH_CLIENT_ID: reddit.clientId, CNV_REDDIT_OAUTH_CLIENT_SECRET: reddit.clientSecret,
    });
    await svc.app.inject({ method: 'PATCH', url: `/v1/sites/${svc.site.id}`, headers: svc.auth, payload: { domain: ORIGIN } });
  });
  afterAll(async () => {
    await svc.close();
    await Promise.all([reddit.close(), tiktok.close()]);
  });
  beforeEach(() => {
    reddit.reset();
    tiktok.reset();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  const pathOf = (url: string) => new URL(url).pathname;

  /** A worker that sends only on drain(), on a clock the test steps. */
  function worker(clock = steppableClock(), sendTimeoutMs = 5000) {
    const w = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs });
    workers.push(w);
    return Object.assign(w, { clock });
  }

  /** A snapshot with both platforms' click ids and cookies, then the signed report that pairs with it. */
  async function reportSignup(consent: 'granted' | 'denied' | null = null, extra: Record<string, unknown> = {}): Promise<{ eventId: string; customerEventId: string; ttclid: string; rdtCid: string }> {
    seq += 1;
    const token = newToken();
    const ttclid = `E.C.P.test-${seq}-${Date.now()}`;
    const rdtCid = `31847420452918${String(seq).padStart(5, '0')}`;
    const snapshot = snapshotBody({
      correlation_token: token,
      occurred_at: new Date().toISOString(),
      page_url: `${ORIGIN}/signup`,
      touch: { click_ids: { ttclid, rdt_cid: rdtCid }, utm: {}, landing_page_url: `${ORIGIN}/?ttclid=${ttclid}`, referrer: null, captured_at: new Date().toISOString() },
      cookies: { _ttp: `ttp-${seq}-cookie`, _rdt_uuid: `1677712978045.b8f7eb7d-b357-437b-8bd3-${String(seq).padStart(12, '0')}` },
      consent: { ad_user_data: consent, ad_personalization: consent },
    });
    const posted = await svc.app.inject({
      method: 'POST', url: snapshotsPath(svc.site.site_key), headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': UA },
      payload: JSON.stringify(snapshot),
    });
    expect(posted.statusCode).toBe(204);
    const customerEventId = `user_${seq}_${Date.now()}`;
    const res = await svc.app.inject(
      signedReport(svc.site.site_key, 'signup', { customer_event_id: customerEventId, correlation_token: token, email: 'Al.ice+news@Example.com', phone: '+1 555 444 1234', ...extra }, secret),
    );
    expect(res.statusCode).toBe(200);
    const events = json(await svc.app.inject({ method: 'GET', url: "/v1/events", headers: svc.auth }));
    const event = events.data.find((e: { customer_event_id: string }) => e.customer_event_id === customerEventId);
    return { eventId: event.id, customerEventId, ttclid, rdtCid };
  }

  /** A signed POST of `body` to any webhook path (a later stage, an adjustment). */
  async function signedPost(path: string, body: unknown) {
    const payload = JSON.stringify(body);
    const signature = generateTestSignatureHeader({ secret, path, body: payload });
    const res = await svc.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature }, payload });
    return { status: res.statusCode, body: json(res) };
  }

  const eventOf = async (id: string) => json(await svc.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers: svc.auth }));
  const actionOf = (event: { actions: Array<{ destination: string }> }, destination: string) => event.actions.find((a) => a.destination === destination) as any;

  it('connects Reddit and TikTok through their hosted pages, tokens sealed and never shown again', async () => {
    for (const [type, form, field] of [
      ['reddit', `pixel_id=${FAKE_REDDIT_PIXEL}&access_token=${encodeURIComponent(FAKE_REDDIT_TOKEN)}`, 'name="pixel_id"'],
      ['tiktok', `pixel_code=${FAKE_TIKTOK_PIXEL}&access_token=${FAKE_TIKTOK_TOKEN}`, 'name="pixel_code"'],
    ] as const) {
      const handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_destination', destination_type: type } }));
      const page = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(field);
      expect(page.body).toContain('type="password"');
      const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: form });
      expect(done.statusCode).toBe(200);
      expect(json(await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${handoff.id}`, headers: svc.auth })).status).toBe('completed');
    }
    const listed = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth }));
    expect(listed.data.map((d: { type: string; status: string }) => [d.type, d.status])).toEqual([['reddit', 'connected'], ['tiktok', 'connected']]);
    const rows = await svc.db.query<{ credentials: string }>('select credentials from destinations where account_id = $1', [svc.accountId]);
    for (const token of [FAKE_REDDIT_TOKEN, FAKE_TIKTOK_TOKEN]) {
      expect(JSON.stringify(listed)).not.toContain(token);
      for (const row of rows) expect(row.credentials).not.toContain(token);
    }

    // Both connections pass their test through the platform's test mode.
    for (const d of listed.data) {
      const tested = json(await svc.app.inject({ method: 'POST', url: `/v1/destinations/${d.id}/test`, headers: svc.auth, payload: {} }));
      expect(tested).toMatchObject({ ok: true });
    }

    // The API trigger and the flow, as a user sets them up.
    const trigger = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_trigger_source', site_id: svc.site.id } }));
    const shown = await svc.app.inject({ method: 'POST', url: pathOf(trigger.url), headers: FORM, payload: '' });
    secret = /whsec_[A-Za-z0-9]{32}/.exec(shown.body)![0];
    const flow = json(
      await svc.app.inject({
        method: 'POST', url: '/v1/flows', headers: svc.auth,
        payload: {
          site_id: svc.site.id, name: 'Signups', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
          actions_config: [{ integrationId: 'reddit', config: {} }, { integrationId: 'tiktok', config: { event_name: 'CompleteRegistration' } }],
        },
      }),
    );
    const published = await svc.app.inject({ method: 'POST', url: `/v1/flows/${flow.id}/publish`, headers: svc.auth });
    expect(json(published).status).toBe('live');
  });

  it('refuses to publish an action config each platform would refuse, saying what to write', async () => {
    const created = await svc.app.inject({
      method: 'POST', url: '/v1/flows', headers: svc.auth,
      payload: {
        site_id: svc.site.id, name: 'Bad', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'bad' },
        actions_config: [{ integrationId: 'reddit', config: { event_name: 'SignUp' } }, { integrationId: 'tiktok', config: { event: 'Lead' } }],
      },
    });
    const res = await svc.app.inject({ method: 'POST', url: `/v1/flows/${json(created).id}/publish`, headers: svc.auth });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.body).toContain('SIGN_UP');
    expect(res.body).toContain("no setting 'event'");
  });

  it('delivers a signup to both with their click ids, browser cookies and hashed identifiers', async () => {
    const { eventId, customerEventId, ttclid, rdtCid } = await reportSignup();
    const w = worker();
    expect((await w.drain()).map((r) => r.result).sort()).toEqual(['delivered', 'delivered']);
    const event = await eventOf(eventId);
    expect(event.status).toBe('completed');
    expect(event.actions.map((a: { status: string }) => a.status)).toEqual(['delivered', 'delivered']);

    const [r] = reddit.counted();
    expect(reddit.requests[0]!.problems).toEqual([]);
    expect(r!.event).toMatchObject({
      action_source: 'WEBSITE', type: { tracking_type: 'SIGN_UP' }, click_id: rdtCid, metadata: { conversion_id: customerEventId },
      user: { uuid: expect.stringMatching(/^1677712978045\./), user_agent: UA, email: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    const [t] = tiktok.counted();
    expect(tiktok.requests[0]!.problems).toEqual([]);
    expect(t!.event).toMatchObject({ event: 'CompleteRegistration', event_id: customerEventId, user: { ttclid, ttp: expect.stringMatching(/^ttp-/), user_agent: UA } });
    // What cnv recorded holds hashes and kinds, never the address, the phone or the user agent.
    expect(JSON.stringify(event)).not.toMatch(/Example\.com|555 444|cnv-test/);
  });

  it('shares nothing with either platform when the visitor denied ad_user_data', async () => {
    const { eventId } = await reportSignup('denied');
    await worker().drain();
    const event = await eventOf(eventId);
    expect(event.status).toBe('completed'); // a skipped action never fails the event
    for (const destination of ['reddit', 'tiktok']) {
      expect(actionOf(event, destination)).toMatchObject({ status: 'skipped', error: { code: 'consent_denied' } });
    }
    expect(reddit.requests).toHaveLength(0);
    expect(tiktok.requests).toHaveLength(0);
  });

  it('waits out each platform’s rate limit and then delivers', async () => {
    const { eventId } = await reportSignup();
    reddit.respondWith({ kind: 'rate_limit', retryAfterSeconds: 30 });
    tiktok.respondWith('rate_limit');
    const w = worker();
    expect((await w.drain()).map((r) => r.result)).toEqual(['retrying', 'retrying']);
    let event = await eventOf(eventId);
    expect(actionOf(event, 'reddit')).toMatchObject({ status: 'queued', error: { code: 'rate_limited' } });
    expect(actionOf(event, 'tiktok')).toMatchObject({ status: 'queued', error: { code: 'rate_limited' } });
    w.clock.advance(29_000);
    // TikTok named no wait: its backoff (half of 1 s with random 0.5) has passed; Reddit's 30 s has not.
    expect((await w.drain()).map((r) => r.result)).toEqual(['delivered']);
    w.clock.advance(1_000);
    expect((await w.drain()).map((r) => r.result)).toEqual(['delivered']);
    event = await eventOf(eventId);
    expect(event.status).toBe('completed');
    expect(reddit.requests.map((r) => r.answeredStatus)).toEqual([429, 200]);
  });

  it('fails for good with a plain-language hint when TikTok refuses the pixel, and the event says so', async () => {
    const { eventId } = await reportSignup();
    tiktok.respondWith('no_permission');
    await worker().drain();
    const event = await eventOf(eventId);
    expect(event.status).toBe('failed');
    expect(actionOf(event, 'tiktok')).toMatchObject({
      status: 'failed', error: { code: 'permission_denied', hint: expect.stringContaining('pixel code') },
    });
    expect(actionOf(event, 'reddit').status).toBe('delivered');
  });

  it('counts a conversion the browser pixels already sent with the same id once, and calls it delivered', async () => {
    const { eventId, customerEventId } = await reportSignup();
    // The site's Reddit Pixel and TikTok Pixel sent the same conversion first, with the customer_event_id as its id.
    await fetch(`${reddit.url}/api/v3/pixels/${FAKE_REDDIT_PIXEL}/conversion_events`, {
      method: 'POST', headers: { authorization: `Bearer ${FAKE_REDDIT_TOKEN}`, 'content-type': 'application/json', 'user-agent': 'reddit-pixel-test' },
      body: JSON.stringify({ data: { events: [{ event_at: Date.now(), action_source: 'WEBSITE', type: { tracking_type: 'SIGN_UP' }, click_id: '1', metadata: { conversion_id: customerEventId } }] } }),
    });
    await fetch(`${tiktok.url}/open_api/v1.3/event/track/`, {
      method: 'POST', headers: { 'access-token': FAKE_TIKTOK_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [{ event: 'CompleteRegistration', event_time: Math.floor(Date.now() / 1000), event_id: customerEventId, user: { ttclid: 'x' } }] }),
    });
    await worker().drain();
    expect((await eventOf(eventId)).actions.map((a: { status: string }) => a.status)).toEqual(['delivered', 'delivered']);
    expect(reddit.counted()).toHaveLength(1);
    expect(tiktok.counted()).toHaveLength(1);
    expect(reddit.duplicates()).toBe(1);
    expect(tiktok.duplicates()).toBe(1);
  });

  it('delivers to a healthy TikTok account while a Reddit account hangs, and Reddit catches up later', async () => {
    const { eventId } = await reportSignup();
    reddit.respondWith('hang');
    const w = worker(steppableClock(), 300); // the hang outlasts any timeout; a short one keeps the test short
    const results = await w.drain();
    expect(results.map((r) => r.result).sort()).toEqual(['delivered', 'retrying']);
    let event = await eventOf(eventId);
    expect(actionOf(event, 'tiktok').status).toBe('delivered');
    expect(actionOf(event, 'reddit')).toMatchObject({ status: 'queued', error: { code: 'timeout' } });
    w.clock.advance(60_000);
    await worker(w.clock).drain();
    event = await eventOf(eventId);
    expect(event.status).toBe('completed');
    expect(reddit.counted()).toHaveLength(1);
  });

  it('keeps TikTok’s conversions queued when it refuses the token, and sends them after a new handoff', async () => {
    const { eventId } = await reportSignup();
    tiktok.respondWith('invalid_token');
    const w = worker();
    await w.drain();
    let event = await eventOf(eventId);
    expect(actionOf(event, 'reddit').status).toBe('delivered');
    expect(actionOf(event, 'tiktok').status).toBe('queued'); // waiting, never failed
    const listed = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth }));
    expect(listed.data.find((d: { type: string }) => d.type === 'tiktok').status).toBe('reauthorization_required');

    const handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_destination', destination_type: 'tiktok' } }));
    const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: `pixel_code=${FAKE_TIKTOK_PIXEL}&access_token=${FAKE_TIKTOK_TOKEN}` });
    expect(done.statusCode).toBe(200);
    w.clock.advance(60 * 60_000);
    await w.drain();
    event = await eventOf(eventId);
    expect(event.status).toBe('completed');
    // The new token was checked at connect with a test event (test_event_code): the conversion itself counted once.
    expect(tiktok.counted().filter((c) => c.testEventCode === null)).toHaveLength(1);
    expect(tiktok.counted().filter((c) => c.testEventCode !== null)).toHaveLength(1);
  });
  it('refuses a pasted access token that the platform refuses, on its field, and stores nothing', async () => {
    const before = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth })).data.find((d: { type: string }) => d.type === 'tiktok');
    const handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_destination', destination_type: 'tiktok' } }));
    const refused = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: `pixel_code=${FAKE_TIKTOK_PIXEL}&access_token=not-the-token-tiktok-issued-000000` });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/TikTok refused this Events API access token: /);
    expect(refused.body).toMatch(/id="access_token"[^>]*aria-invalid="true"/);
    expect(json(await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${handoff.id}`, headers: svc.auth })).status).toBe('pending');
    const after = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth })).data.find((d: { type: string }) => d.type === 'tiktok');
    expect(after).toEqual(before);
  });

  it('marks TikTok reauthorization_required at once when a connection test finds its token refused', async () => {
    const statusOf = async () =>
      json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth })).data.find((d: { type: string }) => d.type === 'tiktok');
    const destination = await statusOf();
    expect(destination.status).toBe('connected');
    tiktok.respondWith('invalid_token');
    const tested = json(await svc.app.inject({ method: 'POST', url: `/v1/destinations/${destination.id}/test`, headers: svc.auth }));
    expect(tested.ok).toBe(false);
    expect(tested.error.code).toBe('invalid_token');
    expect(tested).not.toHaveProperty('credentialRefused');
    expect((await statusOf()).status).toBe('reauthorization_required');
    // A new token through a handoff makes it connected again (the planned refusal answered the test only).
    const handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_destination', destination_type: 'tiktok' } }));
    expect((await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: `pixel_code=${FAKE_TIKTOK_PIXEL}&access_token=${FAKE_TIKTOK_TOKEN}` })).statusCode).toBe(200);
    expect((await statusOf()).status).toBe('connected');
  });

  it('carries a signup’s value and customer id to both, each in its own documented fields', async () => {
    const { eventId } = await reportSignup(null, { value: 49.9, currency: 'EUR', customer_id: 'Acct_42' });
    await worker().drain();
    expect((await eventOf(eventId)).status).toBe('completed');
    expect(reddit.requests[0]!.problems).toEqual([]);
    expect(tiktok.requests[0]!.problems).toEqual([]);
    // Reddit: metadata.value/currency, external_id the trimmed id hashed; TikTok: properties, the id lower-cased first.
    expect(reddit.counted()[0]!.event).toMatchObject({ type: { tracking_type: 'SIGN_UP' }, metadata: { value: 49.9, currency: 'EUR' }, user: { external_id: sha256Hex('Acct_42') } });
    expect(tiktok.counted()[0]!.event).toMatchObject({ properties: { value: 49.9, currency: 'EUR' }, user: { external_id: sha256Hex('acct_42') } });
  });

  it('delivers a later stage reported with only a customer id, with the signup’s clicks, as PURCHASE and Purchase', async () => {
    const flow = json(
      await svc.app.inject({
        method: 'POST', url: '/v1/flows', headers: svc.auth,
        payload: {
          site_id: svc.site.id, name: 'First payment', trigger_config: { type: 'conversion', integrationId: 'api', key: 'paid' },
          actions_config: [{ integrationId: 'reddit', config: {} }, { integrationId: 'tiktok', config: {} }],
        },
      }),
    );
    expect(json(await svc.app.inject({ method: 'POST', url: `/v1/flows/${flow.id}/publish`, headers: svc.auth })).status).toBe('live');
    const customerId = `cus_${Date.now()}`;
    const { ttclid, rdtCid } = await reportSignup(null, { customer_id: customerId });
    await worker().drain();
    reddit.reset();
    tiktok.reset();

    const stage = await signedPost(conversionPath(svc.site.site_key, 'paid'), { customer_event_id: `pay_${customerId}`, customer_id: customerId, value: 29, currency: 'USD' });
    expect(stage).toMatchObject({ status: 200, body: { match: 'identity' } });
    await worker().drain(); // a fresh clock: the stage was queued after the first worker's clock began
    expect(reddit.requests[0]!.problems).toEqual([]);
    expect(tiktok.requests[0]!.problems).toEqual([]);
    expect(reddit.counted()[0]!.event).toMatchObject({
      type: { tracking_type: 'PURCHASE' }, click_id: rdtCid, metadata: { conversion_id: `pay_${customerId}`, value: 29, currency: 'USD' },
      user: { external_id: sha256Hex(customerId) },
    });
    expect(tiktok.counted()[0]!.event).toMatchObject({
      event: 'Purchase', event_id: `pay_${customerId}`, properties: { value: 29, currency: 'USD' },
      user: { ttclid, external_id: sha256Hex(customerId.toLowerCase()) },
    });
  });

  it('answers an adjustment on Reddit and TikTok as unsupported, each with its own reason, never a silent success', async () => {
    const { eventId, customerEventId } = await reportSignup(null, { value: 99, currency: 'EUR' });
    await worker().drain();
    const adjusted = await signedPost(adjustmentPath(svc.site.site_key), { adjustment_id: `adj_${customerEventId}`, customer_event_id: customerEventId, type: 'restate', value: 49, currency: 'EUR' });
    expect(adjusted).toMatchObject({ status: 200, body: { status: 'accepted', events: 1 } });
    await worker().drain();
    const event = await eventOf(eventId);
    const results = event.adjustments[0].results;
    expect(results).toEqual(expect.arrayContaining([
      { destination: 'reddit', status: 'unsupported', reason: expect.stringMatching(/^Reddit's Conversions API .*conversion_id.* Reddit keeps the conversion as it was sent: use the corrected value cnv keeps \(the event's current_value, the dashboard's Value\) in your own reports\. An adjustment that arrives before a conversion is first sent is applied to that send/) },
      { destination: 'tiktok', status: 'unsupported', reason: expect.stringMatching(/^TikTok's Events API .*event_id.* TikTok keeps the conversion as it was sent: use the corrected value cnv keeps \(the event's current_value, the dashboard's Value\) in your own reports\. An adjustment that arrives before a conversion is first sent is applied to that send/) },
    ]));
    // Nothing was sent for it: one request each, the original conversion.
    expect(reddit.requests).toHaveLength(1);
    expect(tiktok.requests).toHaveLength(1);
  });
  it('connects Reddit by signing in with Reddit instead of a token, and delivers with the OAuth access token', async () => {
    const handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_destination', destination_type: 'reddit' } }));
    const page = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(page.body).toContain(`href="${pathOf(handoff.url)}/authorize"`); // the sign-in, offered beside the token
    expect(page.body).toContain('name="access_token"');
    const begin = await svc.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize` });
    expect(begin.statusCode).toBe(302);
    const authorize = new URL(begin.headers.location as string);
    expect(authorize.searchParams.get('scope')).toBe('adsconversions');
    expect(authorize.searchParams.get('duration')).toBe('permanent');
    // The browser at Reddit: the fake consents at once and sends it back to cnv's callback.
    const consent = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location')!);
    const back = await svc.app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}`, headers: { cookie: cookieHeaderFrom(begin.headers['set-cookie']) } });
    expect(back.statusCode).toBe(303);
    const form = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(form.body).toContain('Signed in with Reddit');
    expect(form.body).not.toContain('name="access_token"');
    const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: `pixel_id=${FAKE_REDDIT_PIXEL}` });
    expect(done.statusCode).toBe(200);
    expect(reddit.requests.filter((r) => r.path === '/api/v1/access_token').map((r) => [r.problems, r.headers.authorization?.startsWith('Basic ')])).toEqual([[[], true]]);

    const { eventId } = await reportSignup();
    await worker().drain();
    expect((await eventOf(eventId)).actions.find((a: { destination: string }) => a.destination === 'reddit').status).toBe('delivered');
    const sent = reddit.requests.filter((r) => r.path.endsWith('/conversion_events'));
    expect(sent.map((r) => [r.answeredStatus, r.problems])).toEqual([[200, []]]);
    expect(sent[0]!.headers.authorization).toMatch(/^Bearer fake-reddit-at-/); // the OAuth token, not the conversion token
  });

  it('refreshes a Reddit access token Reddit refuses (401) and resends; a refused refresh makes the conversions wait', async () => {
    const w = worker(); // one worker, so its cached access token is the one Reddit refuses
    await reportSignup();
    w.clock.advance(60_000);
    await w.drain();
    reddit.reset();
    reddit.revokeAccessTokens();
    const first = await reportSignup();
    w.clock.advance(60_000);
    await w.drain();
    expect(actionOf(await eventOf(first.eventId), 'reddit').status).toBe('delivered');
    expect(reddit.requests.map((r) => [r.path.endsWith('/conversion_events') ? 'events' : 'token', r.answeredStatus])).toEqual([['events', 401], ['token', 200], ['events', 200]]);
    expect(reddit.requests.flatMap((r) => r.problems)).toEqual(['wrong, expired or revoked bearer token']);

    reddit.revokeAccessTokens();
    reddit.revokeRefreshTokens();
    const second = await reportSignup();
    w.clock.advance(60_000);
    await w.drain();
    expect(actionOf(await eventOf(second.eventId), 'reddit').status).toBe('queued'); // waiting, never failed
    const listed = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth }));
    expect(listed.data.find((d: { type: string }) => d.type === 'reddit').status).toBe('reauthorization_required');
  });
});
