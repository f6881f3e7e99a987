/**
 * The dashboard in real Chromium against the real service, its account and session side: the one-time sign-in link, a
 * site's domain, snippet and live install check, API keys, the session rules (a reused or expired link, a post without
 * its CSRF token, another account's ids, sign-out) and the pages without JavaScript; screenshots of each page at a
 * desktop (1280) and a phone (390) width. Its delivery side (Meta, flows, events, notifications) is
 * dashboard-delivery.spec.ts, on a service of its own, so the two run side by side.
 */
import { expect, test } from './support/test';
import { followSignInLink, freshLink, open, shoot, signIn, useDashboardService } from './support/dashboard';
import { startHttpsProxy } from './support/https-proxy';
import { throwawayCertificate } from './support/tls';
import { insertAccount } from '../src/server/accounts/sql';
import { insertSite } from '../src/server/api/sites/sql';
import { newId } from '../src/server/db/ids';
import { insertApiFlow, snapshotBody } from '../test/server/support/fixtures';

const service = useDashboardService();
// The tests read these through the handle once the service has started.
let svc: typeof service.svc;
let origin: string;

test.describe.configure({ mode: 'serial', timeout: 150_000 });

test.beforeEach(() => {
  ({ svc, origin } = service);
});

test('the first start\'s sign-in link opens a page that signs in once, on its button; a reused or expired link is refused', async ({ page, browser, request }) => {
  expect(svc.signInLink).toMatch(/^http:\/\/cnv\.test:\d+\/dashboard\/sign-in\?token=/);
  // A link previewer or mail scanner opens the link first (HEAD, GET): that uses nothing and signs nobody in.
  for (const method of ['HEAD', 'GET'] as const) {
    const link = new URL(svc.signInLink!);
    const scanned = await request.fetch(`${svc.base}${link.pathname}${link.search}`, { method, maxRedirects: 0 });
    expect(scanned.status(), method).toBe(200);
    expect(scanned.headers()['set-cookie'], method).toBeUndefined();
  }
  const opened = await page.goto(svc.signInLink!);
  expect(opened?.headers()['referrer-policy']).toBe('same-origin');
  await expect(page.getByRole('heading', { name: 'Sign in to cnv', level: 1 })).toBeVisible();
  await expect(page.getByText(/Sign in to the cnv dashboard of the account/)).toBeVisible();
  expect(await page.context().cookies()).toEqual([]);
  await shoot(page, 'sign-in');
  // The post carries the page's real Origin (a browser without fetch metadata is checked by it), not "null".
  const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/dashboard/sign-in'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  expect(await (await posted).headerValue('origin')).toBe(origin);
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
  const expired = await second.goto(await freshLink(svc, undefined, new Date(Date.now() - 16 * 60_000)));
  expect(expired?.status()).toBe(410);
  await expect(second.getByRole('alert')).toContainText('expired');
  expect(await other.cookies()).toEqual([]);
  await other.close();
});

test('Sites: the domain is saved, the snippet copies, and the install check shows origins seen and refused', async ({ page }) => {
  await open(page, svc, 'Sites');
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

test('API keys: a key is shown once, listed by its first characters, and revoked', async ({ page }) => {
  page.on('dialog', (dialog) => void dialog.accept());
  await open(page, svc, 'API keys');
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

test('a form posted without its CSRF token is refused and changes nothing', async ({ page }) => {
  await open(page, svc, 'Sites');
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
  await signIn(page, svc);
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
  await signIn(page, svc);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('status')).toHaveText('You are signed out.');
  const res = await page.goto(`${origin}/`);
  expect(res?.status()).toBe(401);
  await expect(page.getByText('CNV_API_KEY=cnv_sk_… npx cnv dashboard')).toBeVisible();
  await shoot(page, 'signed-out');
});

test('over https (the TLS proxy of production) the session is a __Host- cookie Chromium keeps, and a plain one of that name opens nothing', async ({ browser }) => {
  const proxy = await startHttpsProxy(throwawayCertificate(['cnv.test']), svc.port);
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  try {
    const secureOrigin = `https://cnv.test:${proxy.port}`;
    const link = new URL(await freshLink(svc));
    const page = await context.newPage();
    await page.goto(`${secureOrigin}${link.pathname}${link.search}`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page).toHaveURL(`${secureOrigin}/`);
    await expect(page.getByRole('navigation', { name: 'Dashboard' })).toBeVisible();
    // Chromium refuses a __Host- cookie unless it is Secure, for Path=/ and without Domain: kept means well-formed.
    const [cookie, ...others] = await context.cookies();
    expect(others).toEqual([]);
    expect(cookie).toMatchObject({ name: '__Host-cnv_dashboard_session', httpOnly: true, secure: true, sameSite: 'Lax', domain: 'cnv.test', path: '/' });
    // Another host's cookie of the unprefixed name (a sibling subdomain can set one for cnv.test) carries a valid
    // session here, and still opens nothing over https: only the prefixed cookie is read.
    const tossed = await browser.newContext({ ignoreHTTPSErrors: true });
    await tossed.addCookies([{ name: 'cnv_dashboard_session', value: cookie!.value, domain: '.cnv.test', path: '/', secure: true }]);
    const other = await tossed.newPage();
    expect((await other.goto(`${secureOrigin}/`))?.status()).toBe(401);
    await tossed.close();
  } finally {
    await context.close();
    await proxy.close();
  }
});

test('every page works without JavaScript', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await open(page, svc, 'Sites');
  await expect(page.getByRole('button', { name: 'Copy' })).toHaveCount(0);
  const card = page.locator(`#${svc.bootstrapSite.id}`);
  await card.getByLabel('Time zone').fill('Europe/Berlin');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Site saved.' })).toBeVisible();
  for (const name of ['Destinations', 'Flows', 'Events', 'API keys']) {
    await page.getByRole('link', { name, exact: true }).click();
    await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  }
  await context.close();
});

test('Sites: a name stored with control characters shows without them, and Save in the browser stores it so', async ({ page }) => {
  // Written before names refused control characters: an escape sequence and a line break.
  const [account] = await svc.db.query<{ id: string }>('select account_id as id from sites where id = $1', [svc.bootstrapSite.id]);
  const site = await insertSite(svc.db, account!.id, { name: 'Old shop' });
  await svc.db.query('update sites set name = $2 where id = $1', [site.id, 'Shop\u001b[2J\r\nFront']);
  await open(page, svc, 'Sites');
  const card = page.locator(`#${site.id}`);
  await expect(card.getByLabel('Name', { exact: true })).toHaveValue('Shop[2J Front');
  await expect(card).toContainText('The stored name held invisible control characters');
  await card.scrollIntoViewIfNeeded();
  await shoot(page, 'sites-stored-control-characters');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Site saved.' })).toBeVisible();
  const [saved] = await svc.db.query<{ name: string }>('select name from sites where id = $1', [site.id]);
  expect(saved!.name).toBe('Shop[2J Front');
});

test('an account with more sites than a page: Sites pages on (Next sites), and the Flows page says it lists the first', async ({ page }) => {
  // An agency's client account with 101 sites: the one the page shows past the first 100 has a draft flow.
  const account = await insertAccount(svc.db, 'Client with many sites');
  const sites = [];
  for (let i = 1; i <= 101; i++) sites.push(await insertSite(svc.db, account.id, { name: `Client site ${i}`, domain: `https://c${i}.example.com` }));
  const last = sites[100]!;
  await insertApiFlow(svc.db, last, { triggerKey: 'signup', name: 'Landing page signups', status: 'draft' });
  // Its snippet was pasted on the pages of the first site: the install check names that site.
  await svc.db.query(
    `insert into collector_origins (site_id, origin, kind, reason, domain, count) values ($1, 'https://c1.example.com', 'refused', 'not_covered', $2, 3)`,
    [last.id, last.domain],
  );
  await followSignInLink(page, await freshLink(svc, account.id));
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Sites', exact: true }).click();
  await expect(page.locator('section.card[id^="site_"]')).toHaveCount(100);
  await page.getByRole('link', { name: 'Next sites →' }).click();
  await expect(page.locator('section.card[id^="site_"]')).toHaveCount(1);
  await expect(page.locator(`#${last.id}`).getByLabel('Name', { exact: true })).toHaveValue('Client site 101');
  await expect(page.getByRole('link', { name: 'First sites' })).toBeVisible();
  await expect(page.locator(`#${last.id}`)).toContainText('https://c1.example.com belongs to your site "Client site 1"');
  await shoot(page, 'sites-next-page');
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Flows', exact: true }).click();
  await expect(page.getByRole('status').filter({ hasText: 'This account has more sites than this page shows' })).toBeVisible();
  await expect(page.locator(`#backend-${last.id}`)).toBeVisible();
  await shoot(page, 'flows-more-sites');
  // The notice as the page opens (the full page runs through a hundred sites' backends).
  await page.screenshot({ path: 'test-results/screenshots/dashboard-flows-more-sites-top.png' });
});
