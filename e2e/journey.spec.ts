/**
 * The whole journey in a real browser, through the demo `npm start` serves: an ad click lands with the click ids of
 * six ad platforms, the visitor signs up on a later page, the demo store's backend reports the signup through the
 * Node client, and cnv delivers the conversion to the local fakes of Google (Data Manager API), Meta (Conversions
 * API), Microsoft Advertising (ApplyOfflineConversions), LinkedIn (Conversions API), Reddit (Conversions API v3) and
 * TikTok (Events API 2.0), visible through GET /v1/events.
 * And a user connecting Google Ads for their own account through the hosted page's sign-in, in the browser, as the
 * README's five-minute path says, which leaves the demo (its own account) untouched.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../src/protocol/cookies';
import { SERVICE_GLOBAL } from '../src/protocol/install';
import { DEMO_ACCOUNTS } from '../src/demo/index';
import type { FakeRequest } from '../src/demo/fakes/fake-server';
import { demoEvents as demoEventsOf, useJourneyService } from './support/journey-service';
import { cookieNamed, expect, test } from './support/test';
import type { Page } from '@playwright/test';
import { join } from 'node:path';
import { checkAndShoot } from './support/axe';

const SHOTS = join(import.meta.dirname, '..', 'test-results', 'screenshots');

interface ApiEvent {
  id: string;
  status?: string | null;
  match_quality?: string | null;
  click_ids?: Record<string, string> | null;
  customer_event_id?: string | null;
  actions?: Array<{ destination: string; status: string }>;
}

const ALL_DELIVERED = ['google-ads', 'meta', 'microsoft-ads', 'linkedin', 'reddit', 'tiktok'].map((destination) => ({ destination, status: 'delivered' }));

const journey = useJourneyService();

/** The demo site's events, read with the demo backend's key (the demo lives in its own account). */
function demoEvents(query: Record<string, string> = {}): Promise<ApiEvent[]> {
  return demoEventsOf<ApiEvent>(journey, query);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The one request a fake received that `carries` the conversion; it must have been well-formed and accepted. */
function onlyRequest(requests: readonly FakeRequest[], carries: (r: FakeRequest) => boolean): FakeRequest {
  const found = requests.filter(carries);
  expect(found).toHaveLength(1);
  expect(found[0]!.problems).toEqual([]);
  expect(found[0]!.answeredStatus).toBe(200);
  return found[0]!;
}

async function signUp(page: Page, email: string, name: string): Promise<string> {
  await page.waitForFunction(
    (global) => typeof (window as unknown as Record<string, { captureSaasSignupIntent?: unknown }>)[global]?.captureSaasSignupIntent === 'function',
    SERVICE_GLOBAL,
  );
  await page.getByLabel('Work email').fill(email);
  await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Create my account' }).click();
  await expect(page).toHaveURL(/\/welcome\?user=usr_/);
  return new URL(page.url()).searchParams.get('user')!;
}

test('a user connects Google Ads for their own account through the sign-in in the browser, and the demo keeps its own', async ({ page }) => {
  const auth = { authorization: `Bearer ${journey.apiKey}`, 'content-type': 'application/json' };
  const res = await fetch(`${journey.base}/v1/handoffs`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ purpose: 'connect_destination', destination_type: 'google-ads' }),
  });
  expect(res.status).toBe(201);
  const handoff = (await res.json()) as { id: string; url: string };
  const authorizeCalls = () => journey.demo.fakes.google.server.requests.filter((r) => r.path === '/o/oauth2/v2/auth').length;
  const before = authorizeCalls();

  // The hosted page asks to sign in first; Google's (fake) consent screen agrees at once and sends the browser back.
  // The API is chosen before Google's consent screen: it decides the access Google is asked for.
  await page.goto(handoff.url);
  await expect(page.getByLabel('Send through')).toHaveValue('data_manager');
  await checkAndShoot(page, SHOTS, 'google-ads', 'sign-in');
  await page.getByRole('button', { name: 'Sign in with Google Ads' }).click();
  await expect(page.locator('body')).toContainText('Signed in with Google Ads');
  await expect(page).toHaveURL(handoff.url);
  expect(authorizeCalls()).toBe(before + 1);
  const asked = journey.demo.fakes.google.server.requests.filter((r) => r.path === '/o/oauth2/v2/auth').at(-1)!;
  expect(asked.query.get('scope')).toBe('https://www.googleapis.com/auth/datamanager');
  await expect(page.locator('body')).toContainText('Send through: Data Manager API (recommended), chosen before signing in.');
  // The form after the sign-in: the account ids and the API, no developer token (Google sunset them).
  await expect(page.getByLabel(/developer token/i)).toHaveCount(0);
  await checkAndShoot(page, SHOTS, 'google-ads', 'connect-form');
  await page.getByLabel('Google Ads customer ID').fill('111-222-3333');
  await page.getByRole('button', { name: 'Connect Google Ads' }).click();
  await expect(page.locator('body')).toContainText('Google Ads customer 111-222-3333');

  const polled = (await (await fetch(`${journey.base}/v1/handoffs/${handoff.id}`, { headers: auth })).json()) as { status: string };
  expect(polled.status).toBe('completed');
  const mine = (await (await fetch(`${journey.base}/v1/destinations`, { headers: auth })).json()) as { data: Array<{ type: string; account: Record<string, unknown> }> };
  expect(mine.data).toEqual([expect.objectContaining({ type: 'google-ads', account: expect.objectContaining({ customer_id: '1112223333' }) })]);
  // The demo's connection, in its own account, is still the demo's customer.
  const demos = (await (await fetch(`${journey.base}/v1/destinations`, { headers: { authorization: `Bearer ${journey.demoApiKey}` } })).json()) as {
    data: Array<{ type: string; account: Record<string, unknown> }>;
  };
  expect(demos.data.find((d) => d.type === 'google-ads')?.account).toMatchObject({ customer_id: DEMO_ACCOUNTS.google.customerId.replace(/-/g, '') });
});

test('an ad click with six click ids, a signup on a later page and the backend report end as conversions delivered to six platforms', async ({ page, context }) => {
  test.setTimeout(60_000);
  const clicks = {
    gclid: `TeSt-journey-${randomBytes(6).toString('hex')}`,
    fbclid: `TeSt-fb-${randomBytes(6).toString('hex')}`,
    msclkid: randomBytes(16).toString('hex'),
    li_fat_id: randomUUID(),
    rdt_cid: BigInt(`0x${randomBytes(8).toString('hex')}`).toString(),
    ttclid: `E.C.P.TeSt-${randomBytes(6).toString('hex')}`,
  };
  const email = `ada.${randomBytes(3).toString('hex')}@example.com`;

  // 1. The ad click: the landing URL carries the click ids; the loader keeps them in its first-party cookie.
  await page.goto(`${journey.demo.url}/?${new URLSearchParams({ ...clicks, utm_source: 'demo-ads', utm_medium: 'cpc', utm_campaign: 'demo' })}`);
  await expect.poll(async () => decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))?.value ?? '')).toContain(clicks.li_fat_id);

  // 2. A later page: pricing, reached by a link, with the signup form marked as a conversion surface.
  await page.getByRole('link', { name: 'See pricing and sign up' }).click();
  await expect(page).toHaveURL(`${journey.demo.url}/pricing`);
  const userId = await signUp(page, email, 'Ada Lovelace');

  // 3. The backend created the user and reported the signup with the token the loader wrote in the submit event.
  expect((await cookieNamed(context, CORRELATION_COOKIE))?.value).toMatch(/^[A-Za-z0-9_-]{22}$/);

  // 4. The event with those click ids, through the REST API: completed, delivered to all six platforms.
  let event: ApiEvent | undefined;
  await expect
    .poll(
      async () => {
        event = (await demoEvents()).find((e) => e.click_ids?.gclid === clicks.gclid);
        return event && { customer_event_id: event.customer_event_id, click_ids: event.click_ids, status: event.status, actions: event.actions?.map((a) => ({ destination: a.destination, status: a.status })) };
      },
      { timeout: 30_000 },
    )
    .toEqual({ customer_event_id: userId, click_ids: clicks, status: 'completed', actions: ALL_DELIVERED });
  const { fakes } = journey.demo;

  // 5a. Google, Data Manager API: POST /v1/events:ingest with an OAuth bearer token, the demo account and conversion
  // action as the destination, the gclid in adIdentifiers, the hashed email in userData (HEX encoding).
  const google = onlyRequest(fakes.google.server.requests, (r) => r.path === '/v1/events:ingest' && r.body?.events?.some((e: any) => e.adIdentifiers?.gclid === clicks.gclid));
  expect(google.method).toBe('POST');
  expect(google.headers.authorization).toMatch(/^Bearer ya29\./);
  expect(google.body).toEqual({
    destinations: [{ operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, productDestinationId: DEMO_ACCOUNTS.google.conversionActionId }],
    encoding: 'HEX',
    events: [
      expect.objectContaining({
        transactionId: expect.stringMatching(/^[0-9a-f]{32}$/),
        eventTimestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        eventSource: 'WEB',
        adIdentifiers: { gclid: clicks.gclid },
        userData: { userIdentifiers: expect.arrayContaining([{ emailAddress: sha256(email) }]) },
      }),
    ],
  });

  // 5b. Meta, Conversions API: POST /{version}/{dataset}/events, a website CompleteRegistration whose fbc is built
  // from the fbclid (fb.1.<click time in ms>.<fbclid>), the user id as event_id, the hashed email as em.
  const meta = onlyRequest(fakes.meta.requests, (r) => Array.isArray(r.body?.data) && r.body.data.some((e: any) => e.event_id === userId));
  expect(meta.method).toBe('POST');
  expect(meta.path).toBe(`/v24.0/${DEMO_ACCOUNTS.meta.pixelId}/events`);
  expect(meta.query.get('access_token') ?? meta.body.access_token).toBe(DEMO_ACCOUNTS.meta.accessToken);
  expect(meta.body.data).toEqual([
    expect.objectContaining({
      event_name: 'CompleteRegistration',
      event_time: expect.any(Number),
      action_source: 'website',
      event_source_url: `${journey.demo.url}/pricing`,
      user_data: expect.objectContaining({
        em: [sha256(email)],
        fbc: expect.stringMatching(new RegExp(`^fb\\.1\\.\\d{13}\\.${clicks.fbclid}$`)),
        client_user_agent: expect.stringContaining('Mozilla/5.0'),
      }),
    }),
  ]);

  // 5c. Microsoft Advertising, ApplyOfflineConversions: the account in the CustomerId / CustomerAccountId headers, the
  // goal's exact name, the msclkid as MicrosoftClickId, the email hashed after Microsoft's normalisation (periods
  // before the @ removed).
  const microsoft = onlyRequest(fakes.microsoft.requests, (r) => r.body?.OfflineConversions?.some((c: any) => c.MicrosoftClickId === clicks.msclkid));
  expect(microsoft.path).toBe('/CampaignManagement/v13/OfflineConversions/Apply');
  expect(microsoft.headers).toMatchObject({ customerid: DEMO_ACCOUNTS.microsoft.customerId, customeraccountid: DEMO_ACCOUNTS.microsoft.accountId });
  expect(microsoft.body.OfflineConversions).toEqual([
    {
      ConversionName: DEMO_ACCOUNTS.microsoft.goalName,
      ConversionTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
      MicrosoftClickId: clicks.msclkid,
      HashedEmailAddress: sha256(email.replace(/\.(?=[^@]*@)/g, '')),
    },
  ]);
  expect(microsoft.answer).toEqual({ PartialErrors: [] });

  // 5d. LinkedIn, Conversions API: a BATCH_CREATE of one conversion event of the demo rule, the report's customer_event_id
  // as eventId (so an Insight Tag given the same id dedupes with it),
  // the li_fat_id as a LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID user id beside the hashed email, and the name.
  const dedupId = event!.customer_event_id ?? event!.id;
  const linkedin = onlyRequest(fakes.linkedin.requests, (r) => r.body?.elements?.some((e: any) => e.eventId === dedupId));
  expect(linkedin.path).toBe('/rest/conversionEvents');
  expect(linkedin.headers).toMatchObject({ 'x-restli-method': 'BATCH_CREATE', 'x-restli-protocol-version': '2.0.0', 'linkedin-version': expect.stringMatching(/^\d{6}$/) });
  expect(linkedin.body.elements).toEqual([
    {
      conversion: `urn:lla:llaPartnerConversion:${DEMO_ACCOUNTS.linkedin.conversionRuleId}`,
      conversionHappenedAt: expect.any(Number),
      eventId: dedupId,
      user: {
        userIds: expect.arrayContaining([
          { idType: 'SHA256_EMAIL', idValue: sha256(email) },
          { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: clicks.li_fat_id },
        ]),
        userInfo: { firstName: 'Ada', lastName: 'Lovelace' },
      },
    },
  ]);

  // 5e. Reddit, Conversions API v3: one SIGN_UP for the demo pixel, epoch milliseconds, the rdt_cid as click_id, the
  // user id as conversion_id, the email canonicalised (no dots in the local part) and hashed, the token as Bearer.
  const reddit = onlyRequest(fakes.reddit.requests, (r) => r.body?.data?.events?.some((e: any) => e.click_id === clicks.rdt_cid));
  expect(reddit.path).toBe(`/api/v3/pixels/${DEMO_ACCOUNTS.reddit.pixelId}/conversion_events`);
  expect(reddit.headers.authorization).toBe(`Bearer ${DEMO_ACCOUNTS.reddit.accessToken}`);
  expect(reddit.problems).toEqual([]);
  expect(reddit.body.data.events).toEqual([
    expect.objectContaining({
      event_at: expect.any(Number),
      action_source: 'WEBSITE',
      type: { tracking_type: 'SIGN_UP' },
      click_id: clicks.rdt_cid,
      event_source_url: `${journey.demo.url}/pricing`,
      metadata: { conversion_id: userId },
      user: expect.objectContaining({ email: sha256(email.replace(/\.(?=[^@]*@)/g, '')), user_agent: expect.stringContaining('Mozilla/5.0') }),
    }),
  ]);

  // 5f. TikTok, Events API 2.0: a web CompleteRegistration for the demo pixel, Unix seconds, the user id as event_id,
  // the ttclid in user.ttclid beside the hashed email, the token in the Access-Token header.
  const tiktok = onlyRequest(fakes.tiktok.requests, (r) => r.body?.data?.some((e: any) => e.user?.ttclid === clicks.ttclid));
  expect(tiktok.path).toBe('/open_api/v1.3/event/track/');
  expect(tiktok.headers['access-token']).toBe(DEMO_ACCOUNTS.tiktok.accessToken);
  expect(tiktok.problems).toEqual([]);
  expect(tiktok.body).toEqual({
    event_source: 'web',
    event_source_id: DEMO_ACCOUNTS.tiktok.pixelCode,
    data: [
      expect.objectContaining({
        event: 'CompleteRegistration',
        event_time: expect.any(Number),
        event_id: userId,
        user: expect.objectContaining({ ttclid: clicks.ttclid, email: sha256(email) }),
        page: { url: `${journey.demo.url}/pricing` },
      }),
    ],
  });

  // 6. The welcome page showed it live: every step done, each platform's card delivered with the request its fake
  // received (and no access token).
  await expect(page.locator('#journey [data-final]')).toHaveAttribute('data-final', 'true');
  await expect(page.locator('[data-step]:not([data-state="done"])')).toHaveCount(0);
  for (const [destination, clickId] of [['google-ads', clicks.gclid], ['meta', clicks.fbclid], ['microsoft-ads', clicks.msclkid], ['linkedin', clicks.li_fat_id], ['reddit', clicks.rdt_cid], ['tiktok', clicks.ttclid]] as const) {
    const card = page.locator(`[data-delivery="${destination}"]`);
    await expect(card).toHaveAttribute('data-state', 'done');
    await expect(card.locator('[data-delivery-status]')).toHaveText('delivered');
    await expect(card.locator('[data-request-body]')).toContainText(clickId);
  }
  await expect(page.locator('#journey')).not.toContainText('access_token');
  await expect(page.locator('#journey')).not.toContainText(DEMO_ACCOUNTS.meta.accessToken);
});

test('a signup that never saw an ad click is delivered at medium match, with hashed identifiers only', async ({ page }) => {
  test.setTimeout(60_000);
  const email = `grace.${randomBytes(3).toString('hex')}@example.com`;
  await page.goto(`${journey.demo.url}/pricing`);
  const userId = await signUp(page, email, 'Grace Hopper');

  await expect
    .poll(
      async () =>
        (await demoEvents({ email })).map((e) => ({
          customer_event_id: e.customer_event_id,
          match_quality: e.match_quality,
          click_ids: e.click_ids ?? null,
          status: e.status,
          actions: (e.actions ?? []).map((a) => ({ destination: a.destination, status: a.status })),
        })),
      { timeout: 30_000 },
    )
    .toEqual([{ customer_event_id: userId, match_quality: 'medium', click_ids: null, status: 'completed', actions: ALL_DELIVERED }]);

  const events = journey.demo.fakes.google.ingested().filter((e) => e.event.userData?.userIdentifiers?.some((u: { emailAddress?: string }) => u.emailAddress === sha256(email)));
  expect(events).toHaveLength(1);
  expect(events[0]!.event).not.toHaveProperty('adIdentifiers');
  await expect(page.locator('[data-step="click"]')).toHaveAttribute('data-state', 'skipped');
  await expect(page.locator('#journey [data-final]')).toHaveAttribute('data-final', 'true');
});

test('the hosted webhook-secret page shows the secret once, with a Copy button its CSP lets run, that copies it', async ({ page }) => {
  const auth = { authorization: `Bearer ${journey.apiKey}`, 'content-type': 'application/json' };
  const sites = (await (await fetch(`${journey.base}/v1/sites`, { headers: auth })).json()) as { data: Array<{ id: string }> };
  const res = await fetch(`${journey.base}/v1/handoffs`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ purpose: 'connect_trigger_source', trigger_source: 'api', site_id: sites.data[0]!.id }),
  });
  expect(res.status).toBe(201);
  const handoff = (await res.json()) as { url: string };
  const refused: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
  });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(handoff.url).origin });

  await page.goto(handoff.url);
  await expect(page.getByRole('button', { name: 'Copy' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Create the webhook secret' }).click();
  const secret = (await page.locator('#webhook-secret').textContent())!.trim();
  expect(secret).toMatch(/^whsec_/);
  await expect(page.getByText(/^The webhook secret of the site .+ in the cnv account .+: put it in the backend of this website only\./)).toBeVisible();
  // Its name changes to Copied once clicked: found by what it copies.
  const copy = page.locator('button[data-copy="webhook-secret"]');
  await expect(copy).toHaveText('Copy');
  await expect(copy).toBeVisible();
  await checkAndShoot(page, SHOTS, 'hosted', 'webhook-secret');
  await copy.click();
  await expect(copy).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  expect(refused).toEqual([]);
});
