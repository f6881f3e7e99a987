/**
 * The dashboard with a keyboard and a screen reader in mind, in real Chromium against the real service: after a refused
 * submit the message is in view and has the focus; a live section that refreshes keeps the focus where it was.
 */
import { expect, test } from './support/test';
import { open, useDashboardService } from './support/dashboard';

const service = useDashboardService();
let svc: typeof service.svc;

test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeEach(() => {
  ({ svc } = service);
});

test('a refused Create a flow opens at the form, its message in view and focused', async ({ page }) => {
  await open(page, svc, 'Flows');
  const form = page.locator('#new-flow');
  await form.getByLabel('Name').fill('Signups');
  // No platform is connected: nothing to send to, so the form is refused.
  await form.getByRole('button', { name: 'Create draft' }).click();
  await expect(page).toHaveURL(/\/dashboard\/flows#new-flow-error$/);
  const message = page.locator('#new-flow-error');
  await expect(message).toBeFocused();
  await expect(message).toBeInViewport();
  await expect(message).toHaveText('Tick at least one destination for the flow to send to.');
  await expect(form.getByRole('group', { name: 'Send to' })).toHaveAccessibleDescription('Tick at least one destination for the flow to send to.');
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
