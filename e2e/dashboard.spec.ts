/**
 * The dashboard in real Chromium against the real service: the one-time sign-in link, each page doing its job (a site's
 * domain and install check, Meta connected through the hosted page and tested, a flow with its webhook secret shown
 * once and rotated, events traced end to end, API keys), the session rules (a reused or expired link, a post without
 * its CSRF token, another account's ids, sign-out), the pages without JavaScript, and screenshots of every page at a
 * desktop (1280) and a phone (390) width, written to test-results/screenshots/ (docs/dashboard.md shows copies in docs/screenshots/).
 */
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { checkAndShoot, expectAccessible } from './support/axe';
import { startRealService, type RunningService } from './support/real-service';
import { startFakeMeta, FAKE_META_PIXEL_ID, FAKE_META_TOKEN, type MetaPlan } from '../src/demo/fakes/meta';
import type { FakeServer } from '../src/demo/fakes/fake-server';
import { issueSignInLink } from '../src/server/dashboard';
import { insertAccount } from '../src/server/accounts/sql';
import { insertSite } from '../src/server/api/sites/sql';
import { newId } from '../src/server/db/ids';
import { newToken, signedReport, snapshotBody } from '../test/server/support/fixtures';
import { startReceiver } from '../test/server/support/receiver';
import { enqueueDestinationNotification, enqueueNotification } from '../src/server/notifications';

// Written under test-results/ (ignored); docs/screenshots/ holds the copies docs/dashboard.md shows, updated by hand from these.
const SHOTS = join(import.meta.dirname, '..', 'test-results', 'screenshots');

let svc: RunningService;
let meta: FakeServer<MetaPlan>;
let origin: string;
let webhookSecret = '';

test.describe.configure({ mode: 'serial', timeout: 150_000 });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  meta = await startFakeMeta();
  svc = await startRealService('cnv.test', { CNV_META_GRAPH_API_BASE: meta.url, CNV_SECRET_KEY: '5'.repeat(64) });
  origin = `http://cnv.test:${svc.port}`;
});

test.afterAll(async () => {
  await svc?.close();
  await meta?.close();
});

/** Full-page screenshots at a desktop and a phone width, after the accessibility check of the page at both. */
async function shoot(page: Page, name: string): Promise<void> {
  await checkAndShoot(page, SHOTS, 'dashboard', name);
}

/** A fresh sign-in link of the first account (as `cnv dashboard` prints it). */
async function freshLink(accountId?: string, at?: Date): Promise<string> {
  const [account] = await svc.db.query<{ id: string }>('select id from accounts order by created_at limit 1');
  return (await issueSignInLink(svc.db, svc.settings!, accountId ?? account!.id, at)).url;
}

async function signIn(page: Page): Promise<void> {
  await page.goto(await freshLink());
  await expect(page.getByRole('navigation', { name: 'Dashboard' })).toBeVisible();
}

/** Signs in and opens a page from the navigation. */
async function open(page: Page, name: string): Promise<void> {
  await signIn(page);
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
}

test('the first start\'s sign-in link opens the dashboard once; a reused or expired link is refused', async ({ page, browser }) => {
  expect(svc.signInLink).toMatch(/^http:\/\/cnv\.test:\d+\/dashboard\/sign-in\?token=/);
  await page.goto(svc.signInLink!);
  await expect(page).toHaveURL(`${origin}/`);
  await expect(page.getByRole('heading', { name: 'Welcome to cnv', level: 1 })).toBeVisible();
  await expect(page.getByText('0 of 7 steps done')).toBeVisible();
  await shoot(page, 'overview');
  const cookie = (await page.context().cookies()).find((c) => c.name === 'cnv_dashboard_session')!;
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, domain: 'cnv.test', path: '/' });

  const other = await browser.newContext();
  const second = await other.newPage();
  const reused = await second.goto(svc.signInLink!);
  expect(reused?.status()).toBe(410);
  await expect(second.getByRole('alert')).toHaveText('This sign-in link was already used. Each link works once.');
  await shoot(second, 'sign-in-refused');
  const expired = await second.goto(await freshLink(undefined, new Date(Date.now() - 16 * 60_000)));
  expect(expired?.status()).toBe(410);
  await expect(second.getByRole('alert')).toContainText('expired');
  expect(await other.cookies()).toEqual([]);
  await other.close();
});

test('Sites: the domain is saved, the snippet copies, and the install check shows origins seen and refused', async ({ page }) => {
  await open(page, 'Sites');
  const site = svc.bootstrapSite;
  const card = page.locator(`#${site.id}`);
  await card.getByLabel('Name', { exact: true }).fill('Example shop');
  await card.getByLabel('Domain').fill('https://www.example.com');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Site saved.' })).toBeVisible();
  await expect(card.getByLabel('Domain')).toHaveValue('https://www.example.com');

  // A page of the site and one of another subdomain load the loader; the other subdomain's snapshot is refused.
  const collect = `${svc.base}/collect/v1/sites/${site.site_key}`;
  for (const from of ['https://www.example.com', 'https://www.example.com', 'https://app.example.com']) {
    expect((await fetch(`${collect}/config`, { headers: { origin: from } })).status).toBe(200);
  }
  const accepted = await fetch(`${collect}/snapshots`, { method: 'POST', headers: { origin: 'https://www.example.com', 'content-type': 'text/plain' }, body: JSON.stringify(snapshotBody()) });
  expect(accepted.status).toBe(204);
  const refused = await fetch(`${collect}/snapshots`, { method: 'POST', headers: { origin: 'https://app.example.com', 'content-type': 'text/plain' }, body: JSON.stringify(snapshotBody()) });
  expect(refused.status).toBe(403);
  // The install check updates by itself (no reload) until the first page view arrives.
  await expect(card.locator('.refusals')).toContainText(
    'https://app.example.com is not covered by https://www.example.com: set the domain to https://example.com',
    { timeout: 20_000 },
  );
  await expect(card.getByText('The snippet works')).toBeVisible();
  await expect(card.getByRole('row', { name: /https:\/\/www\.example\.com/ })).toContainText('(2×)');

  await card.locator('summary', { hasText: 'Tag manager' }).click();
  await expect(card.locator(`#gtm-${site.id}`)).toContainText(`loader.js?site_key=${site.site_key}`);
  await shoot(page, 'sites');

  const copy = card.locator(`button[data-copy="snippet-${site.id}"]`);
  await expect(copy).toBeVisible();
  await copy.click();
  await expect(copy).toHaveText('Copied');
  // On plain http the copy selects the snippet and copies the selection.
  expect(await page.evaluate(() => String(window.getSelection()))).toBe(
    `<script async src="${origin}/loader.js?site_key=${site.site_key}"></script>`,
  );
  await page.evaluate(() => window.getSelection()?.removeAllRanges());
});

test('Destinations: Meta is connected through the hosted page and its connection tested', async ({ page }) => {
  await open(page, 'Destinations');
  await expect(page.getByText('No ad platform connected yet')).toBeVisible();
  await page.getByRole('button', { name: 'Connect Meta' }).click();
  await expect(page).toHaveURL(new RegExp(`^${origin}/handoffs/`));
  await expect(page.getByRole('heading', { name: 'Connect Meta to cnv', level: 1 })).toBeVisible();
  await expect(page.getByRole('img', { name: 'Meta logo' })).toBeVisible();
  await expectAccessible(page, 'hosted connect page');
  await page.getByLabel('Dataset (pixel) ID').fill(FAKE_META_PIXEL_ID);
  await page.getByLabel('Conversions API access token').fill(FAKE_META_TOKEN);
  await page.getByRole('button', { name: 'Connect Meta' }).click();
  await expect(page.getByRole('heading', { name: 'Meta is connected to cnv' })).toBeVisible();
  await expectAccessible(page, 'hosted connected page');
  await page.getByRole('link', { name: 'Back to the dashboard' }).click();
  await expect(page).toHaveURL(`${origin}/dashboard/destinations`);
  const card = page.locator('section.card', { hasText: 'Meta' }).first();
  await expect(card.locator('.badge')).toHaveText('connected');
  await expect(card).toContainText(FAKE_META_PIXEL_ID);
  await card.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.getByRole('status')).toContainText('Meta: the connection works.');
  await shoot(page, 'destinations');
});

test('Flows: an API-trigger flow to Meta, its webhook secret shown once, published, the secret rotated and the old one revoked', async ({ page }) => {
  page.on('dialog', (dialog) => void dialog.accept());
  await open(page, 'Flows');
  const form = page.locator('#new-flow');
  await expect(form.getByRole('option', { name: 'Gravity Forms' })).toHaveCount(1);
  await form.getByLabel('Name', { exact: true }).fill('Signups');
  await form.getByLabel('Trigger key').fill('signup');
  // The only connected platform starts ticked.
  await expect(form.getByRole('checkbox', { name: 'Meta' })).toBeChecked();
  await form.getByLabel('Event name').fill('CompleteRegistration');
  await form.getByRole('button', { name: 'Create draft' }).click();
  await expect(page.getByRole('status')).toContainText('Flow created as a draft');
  const flow = page.locator('section.card', { has: page.getByRole('heading', { name: /Signups/ }) });
  await expect(flow.locator('h2 .badge')).toHaveText('draft');

  // Publish waits for what is missing, said in the dashboard's words, with the button that fixes it.
  await expect(flow.getByRole('button', { name: 'Publish' })).toBeDisabled();
  await expect(flow.locator('.todo')).toContainText('Your backend is not connected to');
  await flow.getByRole('button', { name: 'Create webhook secret' }).click();
  const shown = page.locator('pre[id^="secret-"]');
  webhookSecret = (await shown.textContent())!.trim();
  expect(webhookSecret).toMatch(/^whsec_/);
  await expect(flow.getByRole('button', { name: 'Publish' })).toBeEnabled();
  await flow.getByRole('button', { name: 'Publish' }).click();
  await expect(flow.locator('h2 .badge')).toHaveText('live');
  await expect(page.locator('pre[id^="secret-"]')).toHaveCount(0);
  await expect(page.getByText(webhookSecret)).toHaveCount(0);
  await expect(flow.locator('pre[id^="url-"]')).toHaveText(`${origin}/api/webhook-bridge/saas-signup/${svc.bootstrapSite.site_key}/signup`);

  await page.locator('#backend').getByRole('button', { name: 'Rotate secret' }).click();
  const rotated = (await page.locator('pre[id^="secret-"]').textContent())!.trim();
  expect(rotated).not.toBe(webhookSecret);
  await expect(page.getByRole('status').first()).toContainText('The previous secret keeps verifying until');
  await flow.getByText('Client snippet').click();
  await shoot(page, 'flows');

  // The old secret leaked: revoke it now, after a confirmation; it stops verifying at once.
  await page.locator('#backend').getByRole('link', { name: 'Revoke the old secret now' }).click();
  await expect(page.getByRole('heading', { name: /Revoke the old webhook secret/ })).toBeVisible();
  await shoot(page, 'revoke-secret');
  await page.getByRole('button', { name: 'Yes, revoke the old secret now' }).click();
  await expect(page.getByRole('status').first()).toContainText('The old webhook secret is revoked');
  await report('signed-with-old', null, 401);
  webhookSecret = rotated;
});

async function report(customerEventId: string, correlationToken: string | null, status = 200): Promise<void> {
  const site = svc.bootstrapSite;
  const request = signedReport(site.site_key, 'signup', {
    correlation_token: correlationToken, customer_event_id: customerEventId, email: `${customerEventId}@example.com`, allow_uncorrelated: true,
  }, webhookSecret);
  const res = await fetch(`${svc.base}${request.url}`, { method: 'POST', headers: request.headers, body: request.payload });
  expect(res.status, await res.clone().text()).toBe(status);
}

async function eventsOf(): Promise<Array<{ id: string; status: string; customer_event_id: string }>> {
  const res = await fetch(`${svc.base}/v1/events`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
  return ((await res.json()) as { data: Array<{ id: string; status: string; customer_event_id: string }> }).data;
}

test('Events: reports become events; the list, its filters and chart, and a trace with the failure hint', async ({ page }) => {
  const token = newToken();
  const snapshot = snapshotBody({
    correlation_token: token,
    occurred_at: new Date().toISOString(),
    touch: {
      click_ids: { fbclid: 'IwAR-e2e-fbclid' },
      utm: { utm_source: 'facebook', utm_medium: 'paid', utm_campaign: 'spring' },
      landing_page_url: 'https://www.example.com/?fbclid=IwAR-e2e-fbclid&utm_source=facebook&utm_medium=paid&utm_campaign=spring',
      referrer: 'https://l.facebook.com/',
      captured_at: new Date(Date.now() - 600_000).toISOString(),
    },
  });
  const collect = `${svc.base}/collect/v1/sites/${svc.bootstrapSite.site_key}/snapshots`;
  expect((await fetch(collect, { method: 'POST', headers: { origin: 'https://www.example.com', 'content-type': 'text/plain' }, body: JSON.stringify(snapshot) })).status).toBe(204);
  await report('user-1001', token);
  await expect.poll(async () => (await eventsOf()).find((e) => e.customer_event_id === 'user-1001')?.status, { timeout: 20_000 }).toBe('completed');
  meta.respondWith('invalid_parameter');
  await report('user-1002', null);
  await expect.poll(async () => (await eventsOf()).find((e) => e.customer_event_id === 'user-1002')?.status, { timeout: 20_000 }).toBe('failed');
  const events = await eventsOf();
  const delivered = events.find((e) => e.customer_event_id === 'user-1001')!;
  const failed = events.find((e) => e.customer_event_id === 'user-1002')!;

  await open(page, 'Events');
  await expect(page.locator('tbody tr')).toHaveCount(2);
  await expect(page.locator('tbody tr').first()).toContainText('u***@example.com');
  await expect(page.locator('svg[role=img]')).toHaveAttribute('aria-label', /2 in 14 days/);
  await shoot(page, 'events');
  await page.getByRole('combobox', { name: 'Status' }).selectOption('failed');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/status=failed/);
  await expect(page.locator('tbody tr')).toHaveCount(1);
  await page.getByRole('link', { name: 'Trace' }).click();
  await expect(page).toHaveURL(`${origin}/dashboard/events/${failed.id}`);
  await expect(page.getByRole('alert')).toContainText('Why it failed');
  await expect(page.getByRole('alert')).toContainText('What to do');
  await shoot(page, 'event-failed');

  await page.goto(`${origin}/dashboard/events/${delivered.id}`);
  const trace = page.locator('ol.trace');
  await expect(trace).toContainText('IwAR-e2e-fbclid');
  await expect(trace).toContainText('utm_campaign');
  await expect(trace).toContainText(token);
  await expect(trace).toContainText('user-1001');
  await expect(trace.locator('.badge').filter({ hasText: 'high' })).toBeVisible();
  await expect(trace.locator('#action-0 .badge').first()).toHaveText('delivered');
  await expect(trace.locator('#action-0 pre').first()).not.toContainText('user-1001@example.com');
  await shoot(page, 'event');
});

test('API keys: a key is shown once, listed by its first characters, and revoked', async ({ page }) => {
  page.on('dialog', (dialog) => void dialog.accept());
  await open(page, 'API keys');
  await page.getByLabel('Label').fill('production backend');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.locator('#new-key').textContent())!.trim();
  expect(key).toMatch(/^cnv_sk_/);
  expect((await fetch(`${svc.base}/v1/sites`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  await shoot(page, 'keys');
  await page.getByRole('link', { name: 'API keys' }).click();
  await expect(page.getByText(key)).toHaveCount(0);
  const row = page.getByRole('row', { name: /production backend/ });
  await row.getByRole('button', { name: 'Revoke' }).click();
  await expect(page.getByRole('status')).toContainText('API key revoked');
  await expect(page.getByRole('row', { name: /production backend/ }).locator('.badge')).toHaveText('revoked');
  expect((await fetch(`${svc.base}/v1/sites`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
});

test('Notifications: an endpoint is added with its secret shown once, and each notification lists its attempts', async ({ page }) => {
  const receiver = await startReceiver();
  try {
    await open(page, 'Notifications');
    await expect(page.getByText('No endpoints: nobody is told when something breaks.')).toBeVisible();
    await shoot(page, 'notifications-empty');
    await page.getByLabel(/^URL/).fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(page.getByText('shown only this once')).toBeVisible();
    await expect(page.locator('#new-secret')).toContainText(/^\s*whsec_/);
    await shoot(page, 'notifications-secret');

    // A platform refuses cnv's authorization (the receiver fails twice: retried after 5 s, then queued for later),
    // and a conversion fails for good (delivered at once). The service's own notification worker sends both.
    const [meta] = await svc.db.query<{ id: string; account_id: string }>("select id, account_id from destinations where type = 'meta' limit 1");
    receiver.answers.push(500, 500);
    await enqueueDestinationNotification(svc.db, meta!.id, 'destination.reauthorization_required', 'Meta refused the access token (OAuthException 190). Conversions for this destination wait (nothing is lost) until it is connected again.');
    const reload = async (text: RegExp, count: number) =>
      expect(async () => {
        await page.goto(`${origin}/dashboard/notifications`);
        await expect(page.getByText(text)).toHaveCount(count, { timeout: 500 });
      }).toPass({ timeout: 30_000 });
    await reload(/HTTP 500/, 2);
    const [failed] = await svc.db.query<{ id: string; site_id: string }>("select id, site_id from events where status = 'failed' limit 1");
    await enqueueNotification(svc.db, meta!.account_id, 'event.failed', {
      site_id: failed?.site_id ?? null, event_id: failed?.id ?? 'evt_unknown', destination: { id: meta!.id, type: 'meta' },
      reason: 'Meta refused the event: the pixel does not accept this event name.',
    });
    await reload(/HTTP 204/, 1);
    expect(receiver.received).toHaveLength(3);
    // Each says what it is about, with a link to the event or the platform; the one endpoint is told every kind.
    await expect(page.getByText('Meta refused the event: the pixel does not accept this event name.')).toBeVisible();
    await expect(page.getByRole('link', { name: 'the event (Meta)' })).toHaveAttribute('href', `/dashboard/events/${failed!.id}`);
    await expect(page.getByRole('link', { name: 'Meta', exact: true })).toHaveAttribute('href', '/dashboard/destinations');
    await expect(page.getByRole('row', { name: /hooks\/cnv/ })).toContainText('Every kind');
    await expect(page.getByText(/next try/)).toBeVisible();
    await shoot(page, 'notifications');
  } finally {
    await receiver.close();
  }
});

test('a form posted without its CSRF token is refused and changes nothing', async ({ page }) => {
  await open(page, 'Sites');
  const card = page.locator(`#${svc.bootstrapSite.id}`);
  await card.getByLabel('Name', { exact: true }).fill('Changed without a token');
  await card.locator('input[name=_csrf]').evaluate((input) => input.remove());
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert')).toContainText('CSRF token is missing or wrong');
  await page.goto(`${origin}/dashboard/sites`);
  await expect(card.getByLabel('Name', { exact: true })).toHaveValue('Example shop');
});

test("another account's ids are not found", async ({ page }) => {
  const account = await insertAccount(svc.db, 'Someone else');
  const site = await insertSite(svc.db, account.id, { name: 'Their site' });
  const eventId = newId('evt');
  await svc.db.query(
    `insert into events (id, account_id, site_id, site_key, occurred_at, sort_at, status) values ($1, $2, $3, $4, now(), now(), 'completed')`,
    [eventId, account.id, site.id, site.site_key],
  );
  await signIn(page);
  await expect(page.getByText('Their site')).toHaveCount(0);
  const res = await page.goto(`${origin}/dashboard/events/${eventId}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  await page.goto(`${origin}/dashboard/sites`);
  await page.locator(`#${svc.bootstrapSite.id} form`).first().evaluate((form, id) => form.setAttribute('action', `/dashboard/sites/${id}`), site.id);
  await page.locator(`#${svc.bootstrapSite.id}`).getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  await shoot(page, 'not-found');
  const [theirs] = await svc.db.query<{ name: string }>('select name from sites where id = $1', [site.id]);
  expect(theirs!.name).toBe('Their site');
});

test('signing out ends the session', async ({ page }) => {
  await signIn(page);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('status')).toHaveText('You are signed out.');
  const res = await page.goto(`${origin}/`);
  expect(res?.status()).toBe(401);
  await expect(page.getByText('npx cnv dashboard')).toBeVisible();
  await shoot(page, 'signed-out');
});

test('every page works without JavaScript', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await open(page, 'Sites');
  await expect(page.getByRole('button', { name: 'Copy' })).toHaveCount(0);
  const card = page.locator(`#${svc.bootstrapSite.id}`);
  await card.getByLabel('Timezone').fill('Europe/Berlin');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Site saved.' })).toBeVisible();
  for (const name of ['Destinations', 'Flows', 'Events', 'API keys']) {
    await page.getByRole('link', { name, exact: true }).click();
    await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  }
  await context.close();
});
