/**
 * The whole journey in a real browser, through the demo `npm start` serves: an ad click lands with a gclid, the visitor
 * signs up on a later page, the demo store's backend reports the signup through the Node client, and cnv delivers
 * the conversion with that gclid to the (local fake) Google Ads API, visible through GET /v1/events.
 */
import { createHash, randomBytes } from 'node:crypto';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../src/protocol/cookies';
import { SERVICE_GLOBAL } from '../src/protocol/install';
import { DEMO } from '../src/demo/index';
import { startJourneyService, type JourneyService } from './support/journey-service';
import { cookieNamed, expect, test } from './support/test';

interface ApiEvent {
  id: string;
  status?: string | null;
  click_ids?: Record<string, string> | null;
  customer_event_id?: string | null;
  actions?: Array<{ destination: string; status: string }>;
}

let journey: JourneyService;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  journey = await startJourneyService();
});

test.afterAll(async () => {
  await journey?.close();
});

/** The events of the demo site carrying this gclid, read with the first-run API key, as a user would. */
async function eventsWithGclid(gclid: string): Promise<ApiEvent[]> {
  const query = new URLSearchParams({ site_id: journey.demo.setup.site.id, limit: '100' });
  const res = await fetch(`${journey.base}/v1/events?${query}`, { headers: { authorization: `Bearer ${journey.apiKey}` } });
  if (!res.ok) throw new Error(`GET /v1/events answered ${res.status}: ${await res.text()}`);
  const page = (await res.json()) as { data: ApiEvent[] };
  return page.data.filter((e) => e.click_ids?.gclid === gclid);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

test('an ad click, a signup on a later page and the backend report end as a conversion delivered to Google Ads', async ({ page, context }) => {
  test.setTimeout(60_000);
  const gclid = `TeSt-journey-${randomBytes(6).toString('hex')}`;
  const email = `ada.${randomBytes(3).toString('hex')}@example.com`;

  // 1. The ad click: the landing URL carries the gclid; the loader keeps it in its first-party cookie.
  await page.goto(`${journey.demo.url}/?gclid=${gclid}&utm_source=google&utm_medium=cpc&utm_campaign=demo`);
  await expect.poll(async () => decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))?.value ?? '')).toContain(gclid);

  // 2. A later page: pricing, reached by a link, with the signup form marked as a conversion surface.
  await page.getByRole('link', { name: 'See pricing and sign up' }).click();
  await expect(page).toHaveURL(`${journey.demo.url}/pricing`);
  await page.waitForFunction(
    (name) => typeof (window as unknown as Record<string, { captureSaasSignupIntent?: unknown }>)[name]?.captureSaasSignupIntent === 'function',
    SERVICE_GLOBAL,
  );
  await page.getByLabel('Work email').fill(email);
  await page.getByLabel('Your name').fill('Ada Lovelace');
  await page.getByRole('button', { name: 'Create my account' }).click();

  // 3. The backend created the user and reported the signup; the welcome page names the user.
  await expect(page).toHaveURL(/\/welcome\?user=usr_/);
  const userId = new URL(page.url()).searchParams.get('user')!;
  expect((await cookieNamed(context, CORRELATION_COOKIE))?.value).toMatch(/^[A-Za-z0-9_-]{22}$/);

  // 4. The event with that gclid, through the REST API: completed, delivered to Google Ads.
  await expect
    .poll(
      async () =>
        (await eventsWithGclid(gclid)).map((e) => ({
          customer_event_id: e.customer_event_id,
          status: e.status,
          actions: (e.actions ?? []).map((a) => ({ destination: a.destination, status: a.status })),
        })),
      { timeout: 30_000 },
    )
    .toEqual([{ customer_event_id: userId, status: 'completed', actions: [{ destination: 'google-ads', status: 'delivered' }] }]);

  // 5. The fake Google Ads API received the click conversion upload with that gclid and the demo conversion action.
  const uploads = journey.demo.fake.requests.filter(
    (r) => r.path.endsWith(':uploadClickConversions') && r.body?.conversions?.some((c: { gclid?: string }) => c.gclid === gclid),
  );
  expect(uploads).toHaveLength(1);
  const [upload] = uploads;
  expect(upload!.problems).toEqual([]);
  expect(upload!.answeredStatus).toBe(200);
  const customerId = DEMO.googleAdsCustomerId.replace(/-/g, '');
  expect(upload!.customerId).toBe(customerId);
  expect(upload!.body.partialFailure).toBe(true);
  expect(upload!.body.conversions).toEqual([
    expect.objectContaining({
      gclid,
      conversionAction: `customers/${customerId}/conversionActions/${DEMO.conversionActionId}`,
      conversionDateTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/),
      userIdentifiers: expect.arrayContaining([{ hashedEmail: sha256(email) }]),
    }),
  ]);

  // 6. The welcome page showed it live: every step done, the upload as the fake received it.
  await expect(page.locator('[data-step^="delivery:"]')).toHaveAttribute('data-state', 'done');
  await expect(page.locator('#journey [data-final]')).toHaveAttribute('data-final', 'true');
  await expect(page.locator('[data-step]:not([data-state="done"])')).toHaveCount(0);
  await expect(page.locator('[data-upload]')).toContainText(gclid);
});

test('a signup that never saw an ad click is delivered at medium match, with hashed identifiers only', async ({ page }) => {
  test.setTimeout(60_000);
  const email = `grace.${randomBytes(3).toString('hex')}@example.com`;
  await page.goto(`${journey.demo.url}/pricing`);
  await page.waitForFunction(
    (name) => typeof (window as unknown as Record<string, { captureSaasSignupIntent?: unknown }>)[name]?.captureSaasSignupIntent === 'function',
    SERVICE_GLOBAL,
  );
  await page.getByLabel('Work email').fill(email);
  await page.getByLabel('Your name').fill('Grace Hopper');
  await page.getByRole('button', { name: 'Create my account' }).click();
  await expect(page).toHaveURL(/\/welcome\?user=usr_/);
  const userId = new URL(page.url()).searchParams.get('user')!;

  const query = new URLSearchParams({ site_id: journey.demo.setup.site.id, email, limit: '10' });
  await expect
    .poll(
      async () => {
        const res = await fetch(`${journey.base}/v1/events?${query}`, { headers: { authorization: `Bearer ${journey.apiKey}` } });
        return ((await res.json()) as { data: Array<ApiEvent & { match_quality?: string | null }> }).data.map((e) => ({
          customer_event_id: e.customer_event_id,
          match_quality: e.match_quality,
          click_ids: e.click_ids ?? null,
          status: e.status,
          actions: (e.actions ?? []).map((a) => ({ destination: a.destination, status: a.status })),
        }));
      },
      { timeout: 30_000 },
    )
    .toEqual([
      { customer_event_id: userId, match_quality: 'medium', click_ids: null, status: 'completed', actions: [{ destination: 'google-ads', status: 'delivered' }] },
    ]);

  const conversions = journey.demo.fake.requests
    .flatMap((r) => (r.body?.conversions ?? []) as Array<Record<string, unknown>>)
    .filter((c) => (c.userIdentifiers as unknown[] | undefined)?.some((u) => (u as { hashedEmail?: string }).hashedEmail === sha256(email)));
  expect(conversions).toHaveLength(1);
  expect(conversions[0]).not.toHaveProperty('gclid');
  await expect(page.locator('[data-step="click"]')).toHaveAttribute('data-state', 'skipped');
  await expect(page.locator('#journey [data-final]')).toHaveAttribute('data-final', 'true');
});
