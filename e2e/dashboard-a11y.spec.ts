/**
 * The dashboard with a keyboard and a screen reader in mind, in real Chromium against the real service: after a refused
 * submit the message is in view and has the focus; a live section that refreshes keeps the focus where it was. And
 * the layout a reader relies on: a card's one line sits in its middle, tiles of one kind look alike, a form's stacked
 * fields stand apart, fields side by side are one height.
 */
import { expect, test } from './support/test';
import { open, signIn, useDashboardService } from './support/dashboard';
import { upsertDestination } from '../src/server/destinations/sql';

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
