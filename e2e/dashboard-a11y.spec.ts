/**
 * The dashboard with a keyboard and a screen reader in mind, in real Chromium against the real service: after a refused
 * submit the message is in view and has the focus; a live section that refreshes keeps the focus where it was. And
 * the layout a reader relies on: a card's one line sits in its middle, tiles of one kind look alike, a form's stacked
 * fields stand apart, fields side by side are one height.
 */
import { expect, test } from './support/test';
import { open, signIn, useDashboardService } from './support/dashboard';
import { upsertDestination } from '../src/server/destinations/sql';
import { newId } from '../src/server/db/ids';

const service = useDashboardService();
let svc: typeof service.svc;

test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeEach(() => {
  ({ svc } = service);
});

test('a refused Create a flow opens at the form, its message in view and focused', async ({ page }) => {
  // No platform connected: nothing to send to, and Create draft is disabled with the reason beside it.
  await open(page, svc, 'Flows');
  await expect(page.locator('#new-flow').getByRole('button', { name: 'Create draft' })).toBeDisabled();
  // One connected (for this test only: the checklist test below starts with nothing done), then unticked: refused.
  const [site] = await svc.db.query<{ account_id: string }>('select account_id from sites where id = $1', [svc.bootstrapSite.id]);
  const meta = await upsertDestination(svc.db, site!.account_id, 'meta', { pixel_id: '1234567890123456' }, null);
  try {
    await open(page, svc, 'Flows');
    const form = page.locator('#new-flow');
    await form.getByLabel('Name', { exact: true }).fill('Signups');
    await form.getByLabel('Trigger key').fill('signup');
    await form.getByRole('checkbox', { name: /Send to Meta/ }).uncheck();
    await form.getByRole('button', { name: 'Create draft' }).click();
    await expect(page).toHaveURL(/\/dashboard\/flows#new-flow-error$/);
    const message = page.locator('#new-flow-error');
    await expect(message).toBeFocused();
    await expect(message).toBeInViewport();
    await expect(message).toHaveText('Tick at least one destination for the flow to send to.');
    await expect(form.getByRole('group', { name: 'Send to' })).toHaveAccessibleDescription('Tick at least one destination for the flow to send to.');
  } finally {
    await svc.db.query('delete from destinations where id = $1', [meta.id]);
  }
});

test("a refused site setting opens at the site's card, its message in view and focused", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 700 });
  await open(page, svc, 'Sites');
  const site = svc.bootstrapSite;
  const card = page.locator(`#${site.id}`);
  await card.getByLabel('Domain').fill('https://www.example.com/a/path');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(page).toHaveURL(new RegExp(`/dashboard/sites/${site.id}#${site.id}-error$`));
  const message = page.locator(`#${site.id}-error`);
  await expect(message).toBeFocused();
  await expect(message).toBeInViewport();
  await expect(card.getByLabel('Domain')).toHaveAccessibleDescription(/must not contain a path/i);
});

test('the live checklist keeps the focus on the link it was on when it refreshes, and says the new progress', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await signIn(page, svc);
  await expect(page.getByText('0 of 7 steps done')).toBeVisible();
  const connect = page.locator('#step-destination a.go');
  await connect.focus();
  await expect(connect).toBeFocused();
  // Done elsewhere (another tab, the API): the checklist ticks the step by itself.
  await svc.db.query(`update sites set domain = 'https://www.example.com' where id = $1`, [svc.bootstrapSite.id]);
  await expect(page.locator('#setup-progress')).toHaveText(/^1 of 7 steps done/, { timeout: 20_000 });
  await expect(page.locator('#step-domain')).toHaveClass(/done/);
  await expect(connect).toBeFocused();
  await expect(page.locator('body > [role="status"]')).toHaveText(/^1 of 7 steps done/);
});

test("at both widths: an empty list's card has its line in its middle, connect tiles are alike, the erasure form's fields stand apart, a row's fields are one height", async ({ page }) => {
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(viewport);
    // Nothing connected in this spec's account: Destinations says so in a card of one line (Flows and Events alike).
    await open(page, svc, 'Destinations');
    const line = page.locator('.card > p[data-live-summary]');
    await expect(line).toHaveText('No ad platform connected yet: pick one below.');
    const gaps = await line.evaluate((p) => {
      const card = p.parentElement!.getBoundingClientRect();
      const text = p.getBoundingClientRect();
      return { above: text.top - card.top, below: card.bottom - text.bottom };
    });
    expect(Math.abs(gaps.above - gaps.below), JSON.stringify(gaps)).toBeLessThanOrEqual(1);
    // Every connect tile alike: its button under the platform's name (Meta's stood beside it, the others' under it).
    const tiles = await page.locator('ul.connect-list li').evaluateAll((items) =>
      items.map((li) => ({ name: li.querySelector('span')!.getBoundingClientRect().bottom, button: li.querySelector('button')!.getBoundingClientRect().top })),
    );
    expect(tiles).toHaveLength(6);
    for (const tile of tiles) expect(tile.button, JSON.stringify(tiles)).toBeGreaterThanOrEqual(tile.name);

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Personal data', exact: true }).click();
    const email = page.getByLabel(/^Email/);
    const phoneLabel = page.locator('label[for="erase-phone"]');
    const customerLabel = page.locator('label[for="erase-customer_id"]');
    const phone = page.getByLabel(/^Phone/);
    const [emailBox, phoneLabelBox, phoneBox, customerLabelBox] = await Promise.all([email.boundingBox(), phoneLabel.boundingBox(), phone.boundingBox(), customerLabel.boundingBox()]);
    // Each field's label starts clearly below the field above it (it touched it: 0 px).
    expect(phoneLabelBox!.y - (emailBox!.y + emailBox!.height)).toBeGreaterThanOrEqual(10);
    expect(customerLabelBox!.y - (phoneBox!.y + phoneBox!.height)).toBeGreaterThanOrEqual(10);

    // The Events filters side by side: three selects, an email field and two date fields, all one height (38, 41, 43 px).
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Events', exact: true }).click();
    const heights = await page.locator('main select, main input[type=search], main input[type=date], main input[type=text]').evaluateAll((fields) =>
      fields.map((f) => f.getBoundingClientRect().height),
    );
    expect(heights.length).toBeGreaterThanOrEqual(6);
    expect(Math.max(...heights) - Math.min(...heights), JSON.stringify(heights)).toBeLessThanOrEqual(0.5);
  }
});

test("Google Ads' connection test form stands apart from the facts above it, its button from its field", async ({ page }) => {
  const [site] = await svc.db.query<{ account_id: string }>('select account_id from sites where id = $1', [svc.bootstrapSite.id]);
  const google = await upsertDestination(svc.db, site!.account_id, 'google-ads', { customer_id: '1234567890' }, null);
  try {
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(viewport);
      await open(page, svc, 'Destinations');
      const card = page.locator(`#${google.id}`);
      const [facts, label, field, button] = await Promise.all([
        card.locator('dl.facts').boundingBox(),
        card.getByText(/^Conversion action id/).boundingBox(),
        card.getByLabel(/^Conversion action id/).boundingBox(),
        card.getByRole('button', { name: 'Test connection' }).boundingBox(),
      ]);
      // They touched: the label 4 px under the facts, the button 0 px under the field.
      expect(label!.y - (facts!.y + facts!.height)).toBeGreaterThanOrEqual(10);
      expect(button!.y - (field!.y + field!.height)).toBeGreaterThanOrEqual(8);
    }
  } finally {
    await svc.db.query('delete from destinations where id = $1', [google.id]);
  }
});

test('Events: a conversion sent to all six platforms reads as a list, each status beside its platform, and the table never scrolls sideways', async ({ page }) => {
  const [site] = await svc.db.query<{ account_id: string }>('select account_id from sites where id = $1', [svc.bootstrapSite.id]);
  const eventId = newId('evt');
  await svc.db.query(
    `insert into events (id, account_id, site_id, site_key, flow_name, trigger, occurred_at, sort_at, status, match_quality, email, data)
     values ($1, $2, $3, $4, 'Signups', 'saas_signup', now(), now(), 'failed', 'high', 'ada@example.com', '{"value": 29, "currency": "EUR", "customer_id": "cus_123456"}')`,
    [eventId, site!.account_id, svc.bootstrapSite.id, svc.bootstrapSite.site_key],
  );
  const platforms = ['google-ads', 'meta', 'microsoft-ads', 'linkedin', 'reddit', 'tiktok'];
  for (const [position, destination] of platforms.entries()) {
    await svc.db.query(
      `insert into event_actions (id, event_id, position, destination, status, attempts) values ($1, $2, $3, $4, $5, 1)`,
      [newId('act'), eventId, position, destination, destination === 'microsoft-ads' ? 'failed' : 'delivered'],
    );
  }
  try {
    // Wide enough for the eight columns (1280, 1024), the rows stacked (800, a phone): never a sideways scroll. Between
    // 641 and 1000 px the table had to be scrolled sideways by up to 300 px, and a long name broke its status onto a
    // line of its own ("Microsoft / Advertising / failed").
    for (const viewport of [{ width: 1280, height: 800 }, { width: 1024, height: 768 }, { width: 800, height: 900 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(viewport);
      await open(page, svc, 'Events');
      const wrap = page.locator('.table-wrap', { has: page.getByRole('table', { name: 'Conversions, newest first' }) });
      const overflow = await wrap.evaluate((w) => w.scrollWidth - w.clientWidth);
      expect(overflow, `${viewport.width} px`).toBeLessThanOrEqual(0);
      const list = page.getByRole('row').filter({ hasText: 'a***@example.com' }).getByRole('list');
      await expect(list.getByRole('listitem')).toHaveText([
        /^Google Ads\s+delivered$/, /^Meta\s+delivered$/, /^Microsoft Advertising\s+failed$/, /^LinkedIn\s+delivered$/, /^Reddit\s+delivered$/, /^TikTok\s+delivered$/,
      ]);
      // Each status starts on its platform's first line, to its right.
      const pairs = await list.locator('li').evaluateAll((items) =>
        items.map((li) => {
          const name = li.querySelector('span:not(.badge)')!.getBoundingClientRect();
          const status = li.querySelector('.badge')!.getBoundingClientRect();
          return { name: li.textContent, top: status.top - name.top, left: status.left - name.right };
        }),
      );
      for (const pair of pairs) {
        expect(Math.abs(pair.top), `${viewport.width} px: ${JSON.stringify(pair)}`).toBeLessThanOrEqual(4);
        expect(pair.left, `${viewport.width} px: ${JSON.stringify(pair)}`).toBeGreaterThanOrEqual(0);
      }
      await page.screenshot({ path: `test-results/screenshots/dashboard-events-six-platforms-${viewport.width}.png`, fullPage: true });
    }
  } finally {
    await svc.db.query('delete from event_actions where event_id = $1', [eventId]);
    await svc.db.query('delete from events where id = $1', [eventId]);
  }
});
