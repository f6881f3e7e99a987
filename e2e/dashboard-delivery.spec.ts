/**
 * The dashboard in real Chromium against the real service, its delivery side: Meta connected through the hosted page
 * and tested, a flow with its webhook secret shown once, published, rotated and the old one revoked, reports becoming
 * events traced end to end (the list, its filters, the value charts), and notification endpoints with every attempt;
 * screenshots of each page at a desktop (1280) and a phone (390) width. The account and session side is
 * dashboard.spec.ts, on a service of its own, so the two run side by side.
 */
import { expect, test } from './support/test';
import { expectAccessible } from './support/axe';
import { open, shoot, useDashboardService } from './support/dashboard';
import { setDomain } from './support/service-api';
import { FAKE_META_PIXEL_ID, FAKE_META_TOKEN } from '../src/demo/fakes/meta';
import { newToken, signedReport, snapshotBody } from '../test/server/support/fixtures';
import { SIGNATURE_HEADER, adjustmentPath } from '../src/protocol/webhook';
import { generateTestSignatureHeader } from '../src/protocol/hmac-node';
import { startReceiver } from '../test/server/support/receiver';
import { enqueueDestinationNotification, enqueueNotification } from '../src/server/notifications';

const service = useDashboardService();
// The tests read these through the handle once the service has started.
let svc: typeof service.svc;
let meta: typeof service.meta;
let origin: string;
let webhookSecret = '';

test.describe.configure({ mode: 'serial', timeout: 150_000 });

test.beforeEach(() => {
  ({ svc, meta, origin } = service);
});

test('Destinations: Meta is connected through the hosted page and its connection tested', async ({ page }) => {
  await open(page, svc, 'Destinations');
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
  await expect(page.getByRole('status').filter({ hasText: 'Meta: the connection works.' })).toBeVisible();
  await shoot(page, 'destinations');
});

test('Flows: an API-trigger flow to Meta, its webhook secret shown once, published, the secret rotated and the old one revoked', async ({ page }) => {
  page.on('dialog', (dialog) => void dialog.accept());
  await open(page, svc, 'Flows');
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
  // The site covers the page that sends the snapshot (dashboard.spec.ts sets a domain through the dashboard itself).
  await setDomain(svc.base, svc.apiKey, svc.bootstrapSite.id, 'https://www.example.com');
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

  await open(page, svc, 'Events');
  await expect(page.getByRole('table', { name: 'Conversions, newest first' }).locator('tbody tr')).toHaveCount(2);
  await expect(page.getByRole('table', { name: 'Conversions, newest first' }).locator('tbody tr').first()).toContainText('u***@example.com');
  await expect(page.locator('svg[role=img]')).toHaveAttribute('aria-label', /2 in 14 days/);
  await shoot(page, 'events');
  await expectChartAxisInViewOnPhone(page);
  await page.getByRole('combobox', { name: 'Status' }).selectOption('failed');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/status=failed/);
  await expect(page.getByRole('table', { name: 'Conversions, newest first' }).locator('tbody tr')).toHaveCount(1);
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
  // The keys Meta got to match it on, its own click id (built from the landing's fbclid) first.
  await expect(trace.locator('#action-0 dl.facts')).toContainText(/Match keys\s*Meta click id \(fbc\) · email/);
  await shoot(page, 'event');

  // The Destinations page counts Meta's failed delivery and sends it again with one press. Meta refuses it once more
  // (the cause is not fixed in this test): it is sent a second time, and fails again, so the later tests still have it.
  await open(page, svc, 'Destinations');
  const card = page.locator('section.card', { hasText: 'Meta' }).first();
  await expect(card.locator('.failed-deliveries')).toContainText('1 delivery to Meta failed.');
  await expect(card.getByRole('link', { name: 'See the failed events' })).toHaveAttribute('href', '/dashboard/events?status=failed');
  await shoot(page, 'destinations-failed');
  meta.respondWith('invalid_parameter');
  await card.getByRole('button', { name: 'Send it again' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'The failed deliveries are queued again' })).toBeVisible();
  const sends = async () => {
    const res = await fetch(`${svc.base}/v1/events/${failed.id}`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
    const event = (await res.json()) as { status: string; actions: Array<{ history: unknown[] }> };
    return `${event.status} after ${event.actions[0]!.history.length} sends`;
  };
  await expect.poll(sends, { timeout: 20_000 }).toBe('failed after 2 sends');

  // The Overview counts it too, and points to where a platform's failures go again at once.
  await open(page, svc, 'Overview');
  const attention = page.locator('section.attention');
  await expect(attention).toContainText('1 conversion failed to reach an ad platform');
  await expect(attention.getByRole('link', { name: 'Destinations' })).toHaveAttribute('href', '/dashboard/destinations');
  await shoot(page, 'overview-attention');
});

test('Events: the chart shows the value per day, one chart per currency, never added together', async ({ page }) => {
  const site = svc.bootstrapSite;
  for (const [customerEventId, value, currency] of [['order-2001', 49.9, 'EUR'], ['order-2002', 29, 'EUR'], ['order-2003', 120, 'USD']] as const) {
    const request = signedReport(site.site_key, 'signup', { customer_event_id: customerEventId, email: `${customerEventId}@example.com`, allow_uncorrelated: true, value, currency }, webhookSecret);
    const res = await fetch(`${svc.base}${request.url}`, { method: 'POST', headers: request.headers, body: request.payload });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  // order-2002 is downgraded to 19 (now), then the upgrade to 99 it had a minute before arrives late: superseded.
  const restate = async (adjustmentId: string, value: number, occurredAt: Date) => {
    const path = adjustmentPath(site.site_key);
    const payload = JSON.stringify({ adjustment_id: adjustmentId, customer_event_id: 'order-2002', type: 'restate', value, currency: 'EUR', occurred_at: occurredAt.toISOString() });
    const signature = generateTestSignatureHeader({ secret: webhookSecret, path, body: payload });
    const res = await fetch(`${svc.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature }, body: payload });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const now = Date.now();
  await restate('downgrade-2002', 19, new Date(now - 1_000));
  await restate('upgrade-2002', 99, new Date(now - 61_000));
  await open(page, svc, 'Events');
  const toggle = page.getByRole('navigation', { name: 'Chart shows' });
  await expect(toggle.getByRole('link', { name: 'Conversions' })).toHaveAttribute('aria-current', 'true');
  await toggle.getByRole('link', { name: 'Value' }).click();
  await expect(page).toHaveURL(/chart=value/);
  await expect(page.getByRole('heading', { name: 'Value per day', level: 2 })).toBeVisible();
  const charts = page.locator('figure[data-currency]');
  await expect(charts).toHaveCount(2);
  await expect(charts.nth(0)).toHaveAttribute('data-currency', 'USD'); // the larger total first
  await expect(charts.nth(0).locator('[data-total]')).toHaveText('USD 120.00');
  await expect(charts.nth(1).locator('[data-total]')).toHaveText('EUR 68.90');
  await expect(page.locator('.value-charts')).toContainText('never added together');
  await shoot(page, 'events-value');
  // Its trace: the late restatement marked superseded, each result saying why; the value stands at 19.
  const restated = (await eventsOf()).find((e) => e.customer_event_id === 'order-2002')!;
  await page.goto(`${origin}/dashboard/events/${restated.id}`);
  const upgrade = page.locator('ol.trace li', { has: page.locator('h3', { hasText: 'upgrade-2002' }) });
  await expect(upgrade.locator('h3 .badge')).toHaveText('superseded');
  await expect(upgrade).toContainText('Not sent: superseded.');
  await expect(page.locator('ol.trace li', { has: page.locator('h3', { hasText: 'downgrade-2002' }) }).locator('h3 .badge')).toHaveCount(0);
  await shoot(page, 'event-superseded');
  await page.goto(`${origin}/dashboard/events?chart=value`);
  // The view stays through a filter.
  await page.getByRole('combobox', { name: 'Status' }).selectOption('completed');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/status=completed.*chart=value|chart=value.*status=completed/);
  await expect(page.getByRole('heading', { name: 'Value per day', level: 2 })).toBeVisible();
});

test('Notifications: an endpoint is added with its secret shown once, and each notification lists its attempts', async ({ page }) => {
  const receiver = await startReceiver();
  try {
    await open(page, svc, 'Notifications');
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

/**
 * On a phone the chart scrolls sideways and opens on today; its y-axis labels (0, the middle and the top) must be in
 * view too, not scrolled out on the left. In view as IntersectionObserver sees it: clipped by the scrolling box.
 */
async function expectChartAxisInViewOnPhone(page: import('@playwright/test').Page): Promise<void> {
  const size = page.viewportSize()!;
  await page.setViewportSize({ width: 375, height: 1400 });
  try {
    await page.reload();
    const frame = page.locator('#chart .chart-frame').first();
    await frame.scrollIntoViewIfNeeded();
    const seen = await frame.evaluate(async (el) => {
      const inView = (node: Element) =>
        new Promise<boolean>((resolve) => {
          const observer = new IntersectionObserver(([entry]) => {
            observer.disconnect();
            resolve(entry!.intersectionRatio > 0.9);
          });
          observer.observe(node);
        });
      const texts = [...el.querySelectorAll('text')];
      const axis = texts.filter((t) => t.getAttribute('text-anchor') === 'end');
      const days = texts.filter((t) => t.getAttribute('text-anchor') === 'middle');
      const labels = [...new Set(axis.map((t) => t.textContent ?? ''))];
      const shown: Record<string, boolean> = {};
      for (const label of labels) {
        let any = false;
        for (const t of axis.filter((a) => a.textContent === label)) any = any || (await inView(t));
        shown[label] = any;
      }
      return { shown, today: await inView(days.at(-1)!), scrolls: el.querySelector('.chart-scroll')!.scrollWidth > el.clientWidth };
    });
    expect(seen.scrolls).toBe(true);
    expect(seen.today).toBe(true);
    expect(Object.keys(seen.shown)).toHaveLength(3);
    expect(seen.shown).toEqual(Object.fromEntries(Object.keys(seen.shown).map((k) => [k, true])));
    // Earlier days are out of view on the left: the page says how to reach them.
    await expect(frame.getByText('Earlier days: scroll the chart sideways.')).toBeVisible();
    await page.screenshot({ path: 'test-results/screenshots/dashboard-events-chart-axis-phone.png' });
  } finally {
    await page.setViewportSize(size);
  }
  // Where the whole chart fits, nothing is out of view and nothing is said.
  await expect(page.locator('#chart .chart-scroll-hint').first()).toBeHidden();
}
