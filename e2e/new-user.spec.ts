/**
 * A brand-new user, from the sign-in link the first start prints to a first delivered conversion, using only the
 * dashboard, the hosted connect page and their own site: the setup checklist leads, each step ticks itself from what
 * cnv sees (the domain, the first page view, Meta connected, the webhook secret, the flow, publishing, the delivery),
 * and the dashboard follows what happens elsewhere without a reload. The customer's site is a small real one: pages
 * with the snippet the user copied from the dashboard, and a backend that reports signups with the webhook secret the
 * user copied, through cnv/client. Meta is the strict local fake. Every page passes axe (no serious or critical
 * violation) and is shot at a desktop and a phone width (test-results/screenshots/walk-*.png).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { checkAndShoot } from './support/axe';
import { startRealService, type RunningService } from './support/real-service';
import { acceptedEvents, startFakeMeta, FAKE_META_PIXEL_ID, FAKE_META_TOKEN, type MetaPlan } from '../src/demo/fakes/meta';
import type { FakeServer } from '../src/demo/fakes/fake-server';
import { createCnvClient } from '../src/client';

const SHOTS = join(import.meta.dirname, '..', 'test-results', 'screenshots');

/** What the user pasted into their site: the snippet (in every page) and the webhook secret (on the server). */
interface Pasted {
  snippet: string;
  secret: string;
  siteKey: string;
}

/** The customer's site: a landing page and a signup page with the pasted snippet, and a backend that reports signups. */
async function startCustomerSite(service: () => string, pasted: Pasted): Promise<{ server: Server; port: number; reports: string[] }> {
  const reports: string[] = [];
  const pageOf = (title: string, body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
${pasted.snippet}
</head><body>${body}</body></html>`;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(pageOf('Shop', '<h1>Our shop</h1><a href="/signup">Sign up</a>'));
      return;
    }
    if (req.method === 'GET' && path === '/signup') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        pageOf('Sign up', '<h1>Create your account</h1><form method="post" action="/signup" data-service-signup-intent><label>Email <input name="email" type="email"></label><button>Create my account</button></form>'),
      );
      return;
    }
    if (req.method === 'POST' && path === '/signup') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const email = new URLSearchParams(Buffer.concat(chunks).toString()).get('email') ?? '';
      // The backend, as the Flows page's client snippet says, with the secret the user copied.
      const cnv = createCnvClient({ webhookBaseUrl: service(), siteKey: pasted.siteKey, triggerKey: 'signup', secret: pasted.secret });
      const result = await cnv.reportSignup({ request: req, customerEventId: `user-${reports.length + 1}`, email });
      reports.push(JSON.stringify(result));
      res.writeHead(200, { 'content-type': 'text/html' }).end(pageOf('Welcome', '<h1>Welcome!</h1>'));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, reports };
}

let svc: RunningService;
let meta: FakeServer<MetaPlan>;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  meta = await startFakeMeta();
  svc = await startRealService('cnv.test', { CNV_META_GRAPH_API_BASE: meta.url, CNV_SECRET_KEY: '7'.repeat(64) });
});

test.afterAll(async () => {
  await svc?.close();
  await meta?.close();
});

/** The accessibility check and full-page screenshots at a desktop and a phone width. */
async function shoot(page: Page, name: string): Promise<void> {
  await checkAndShoot(page, SHOTS, 'walk', name);
}

/** Follows a link of the dashboard's navigation. */
const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();

/** The step of the checklist with this title. */
const step = (page: Page, title: string) => page.locator('ol.checklist > li', { has: page.getByRole('heading', { name: new RegExp(title) }) });

test('a new user goes from the sign-in link to a first delivered conversion with the dashboard alone', async ({ page, context }) => {
  test.setTimeout(420_000);
  page.on('dialog', (dialog) => void dialog.accept());
  const pasted: Pasted = { snippet: '', secret: '', siteKey: '' };
  const site = await startCustomerSite(() => `http://127.0.0.1:${svc.port}`, pasted);
  const siteOrigin = `http://www.example.com:${site.port}`;
  try {
    // 1. The link the first start printed, its "Sign in" pressed, opens the Overview: a checklist with nothing done.
    await page.goto(svc.signInLink!);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Welcome to cnv', level: 1 })).toBeVisible();
    await expect(page.getByText('0 of 7 steps done')).toBeVisible();
    await shoot(page, 'overview-start');

    // 2. The domain.
    await step(page, "Set your site's domain").getByRole('link', { name: /Set the domain/ }).click();
    await expect(page.getByRole('heading', { name: 'Sites', level: 1 })).toBeVisible();
    const card = page.locator(`#${svc.bootstrapSite.id}`);
    await card.getByLabel('Domain').fill(siteOrigin);
    await card.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Site saved.' })).toBeVisible();

    // 3. The snippet, copied from the dashboard into the site's pages; the install check sees the first page view live.
    await nav(page, 'Overview');
    await expect(step(page, "Set your site's domain")).toHaveClass(/done/);
    await step(page, 'Install the snippet').getByRole('link', { name: /Get the snippet/ }).click();
    pasted.snippet = (await card.locator(`#snippet-${svc.bootstrapSite.id}`).textContent())!.trim();
    pasted.siteKey = svc.bootstrapSite.site_key;
    expect(pasted.snippet).toContain(svc.bootstrapSite.site_key);
    await expect(card.getByText('Waiting for the first page view')).toBeVisible();
    const visitor = await context.browser()!.newContext();
    const shopper = await visitor.newPage();
    await shopper.goto(`${siteOrigin}/`);
    await expect(card.getByText('The snippet works')).toBeVisible({ timeout: 20_000 });
    await shoot(page, 'sites-installed');

    // 4. Meta, through the hosted page, while the Overview in another tab follows without a reload.
    const overview = await context.newPage();
    await overview.goto(`http://cnv.test:${svc.port}/`);
    await expect(step(overview, 'Install the snippet')).toHaveClass(/done/);
    await nav(page, 'Overview');
    await step(page, 'Connect an ad platform').getByRole('link', { name: /Connect a platform/ }).click();
    await page.getByRole('button', { name: 'Connect Meta' }).click();
    await expect(page.getByRole('heading', { name: 'Connect Meta to cnv', level: 1 })).toBeVisible();
    await page.getByLabel('Dataset (pixel) ID').fill(FAKE_META_PIXEL_ID);
    await page.getByLabel('Conversions API access token').fill(FAKE_META_TOKEN);
    // The page starts at Off; this user serves California and chooses Limited Data Use.
    await expect(page.getByLabel('Limited Data Use (US state privacy laws)')).toHaveValue('off');
    await page.getByLabel('Limited Data Use (US state privacy laws)').selectOption('on');
    await shoot(page, 'hosted-connect');
    await page.getByRole('button', { name: 'Connect Meta' }).click();
    await expect(page.getByRole('heading', { name: 'Meta is connected to cnv' })).toBeVisible();
    await shoot(page, 'hosted-connected');
    await expect(step(overview, 'Connect an ad platform')).toHaveClass(/done/, { timeout: 15_000 });
    await expect(step(overview, 'Connect an ad platform')).toContainText('Connected: Meta.');
    await page.getByRole('link', { name: 'Back to the dashboard' }).click();
    await expect(page.locator('section.card', { hasText: 'Meta' }).first().locator('.badge')).toHaveText('connected');
    await expect(page.locator('section.card', { hasText: 'Meta' }).first()).toContainText('Limited Data Use: on');
    await shoot(page, 'destinations-connected');

    // 5. The backend's webhook secret, copied into the site's server.
    await nav(page, 'Overview');
    await step(page, 'Connect your backend').getByRole('link', { name: /Create the webhook secret/ }).click();
    await page.locator(`#backend-${svc.bootstrapSite.id}`).getByRole('button', { name: 'Create webhook secret' }).click();
    pasted.secret = (await page.locator(`#secret-${svc.bootstrapSite.id}`).textContent())!.trim();
    expect(pasted.secret).toMatch(/^whsec_/);

    // 6. The flow: Meta is preselected; publishing is possible at once, since nothing is missing.
    const form = page.locator('#new-flow');
    await form.getByLabel('Name', { exact: true }).fill('Signups');
    await form.getByLabel('Trigger key').fill('signup');
    await expect(form.getByRole('checkbox', { name: 'Meta' })).toBeChecked();
    await form.getByRole('button', { name: 'Create draft' }).click();
    const flow = page.locator('section.card', { has: page.getByRole('heading', { name: /Signups/ }) });
    await expect(flow.getByRole('button', { name: 'Publish' })).toBeEnabled();
    await shoot(page, 'flows-ready');
    await flow.getByRole('button', { name: 'Publish' }).click();
    await expect(flow.locator('h2 .badge')).toHaveText('live');
    await expect(step(overview, 'Publish the flow')).toHaveClass(/done/, { timeout: 15_000 });

    // 7. A visitor clicks a Meta ad, signs up on the site; the backend reports; Meta receives the conversion.
    await shopper.goto(`${siteOrigin}/?fbclid=IwAR-walk-click&utm_source=facebook&utm_campaign=launch`);
    await shopper.getByRole('link', { name: 'Sign up' }).click();
    await shopper.getByLabel('Email').fill('grace.hopper@example.org');
    await shopper.getByRole('button', { name: 'Create my account' }).click();
    await expect(shopper.getByRole('heading', { name: 'Welcome!' })).toBeVisible();
    expect(site.reports).toHaveLength(1);
    await expect.poll(() => acceptedEvents(meta).length, { timeout: 30_000 }).toBe(1);
    expect(JSON.stringify(acceptedEvents(meta)[0])).toContain('IwAR-walk-click');
    expect(acceptedEvents(meta)[0]).toMatchObject({ data_processing_options: ['LDU'], data_processing_options_country: 0, data_processing_options_state: 0 });

    // 8. The checklist completes by itself; the event says who converted and traces to Meta.
    await expect(overview.getByRole('heading', { name: 'Setup complete' })).toBeVisible({ timeout: 20_000 });
    await overview.reload();
    await shoot(overview, 'overview-complete');
    await overview.close();
    await nav(page, 'Events');
    const row = page.getByRole('table', { name: 'Conversions, newest first' }).locator('tbody tr').first();
    await expect(row).toContainText('g***@example.org');
    await expect(row).not.toContainText('grace.hopper');
    await expect(row.locator('.badge').filter({ hasText: 'delivered' })).toBeVisible();
    await shoot(page, 'events');
    await row.getByRole('link', { name: /Trace/ }).click();
    await expect(page.locator('#action-0 .badge').first()).toHaveText('delivered');
    await expect(page.locator('ol.trace')).toContainText('IwAR-walk-click');
    await shoot(page, 'trace');
    await visitor.close();
  } finally {
    await new Promise((resolve) => site.server.close(resolve));
  }
});
