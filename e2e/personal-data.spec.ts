/**
 * The dashboard's Personal data page in real Chromium against the real service: a person's signup is on the Events
 * page; the page finds what erasing them would remove and says so before anything goes; after the erasure the Events
 * page no longer shows them and the erasures list shows counts, never the values. Screenshots at a desktop and a phone
 * width, written to test-results/screenshots/.
 */
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { startRealService, type RunningService } from './support/real-service';
import { followSignInLink } from './support/dashboard';
import { issueSignInLink } from '../src/server/dashboard';
import { newId } from '../src/server/db/ids';

const SHOTS = join(import.meta.dirname, '..', 'test-results', 'screenshots');

let svc: RunningService;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  svc = await startRealService('cnv.test', { CNV_SECRET_KEY: '5'.repeat(64) });
});

test.afterAll(async () => {
  await svc?.close();
});

async function shoot(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: join(SHOTS, `dashboard-${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(SHOTS, `dashboard-${name}-phone.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** A signup of Ada: her report (email, name) and its event with a click. */
async function seedSignup(): Promise<void> {
  const site = svc.bootstrapSite;
  const [account] = await svc.db.query<{ account_id: string }>('select account_id from sites where id = $1', [site.id]);
  const report = newId('rpt');
  await svc.db.query(
    `insert into reports (id, site_id, customer_event_id, trigger_key, identity, response) values ($1, $2, 'signup-ada', 'signup', $3, '{}')`,
    [report, site.id, JSON.stringify({ email: 'ada.lovelace@example.com', first_name: 'Augusta' })],
  );
  await svc.db.query(
    `insert into events (id, account_id, site_id, site_key, flow_name, report_id, trigger, occurred_at, sort_at, status, match_quality, email, click_ids, data)
     values ($1, $2, $3, $4, 'Signups', $5, 'api', now(), now(), 'completed', 'high', 'ada.lovelace@example.com', '{"gclid":"Cj0KCQ-ada"}', '{"customer_event_id":"signup-ada"}')`,
    [newId('evt'), account!.account_id, site.id, site.site_key, report],
  );
}

test('a person is found, the removal confirmed, and nothing of them is shown afterwards', async ({ page }) => {
  await seedSignup();
  const [account] = await svc.db.query<{ account_id: string }>('select account_id from sites where id = $1', [svc.bootstrapSite.id]);
  await followSignInLink(page, (await issueSignInLink(svc.db, svc.settings!, account!.account_id)).url);
  await page.getByRole('link', { name: 'Events', exact: true }).click();
  await page.getByRole('link', { name: 'Trace' }).first().click();
  await expect(page.getByText('ada.lovelace@example.com').first()).toBeVisible();
  const tracePage = page.url();

  await page.getByRole('link', { name: 'Personal data', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Personal data', level: 1 })).toBeVisible();
  await expect(page.getByText('No erasures yet.')).toBeVisible();
  await shoot(page, 'personal-data');

  // A phone without its country code: refused in the form's words, the field marked, nothing looked up.
  await page.getByLabel('Phone').fill('555 0100');
  await page.getByRole('button', { name: 'Find what would be erased' }).click();
  const refusal = 'Enter the phone number with its country code, starting with + or 00, e.g. +1 202 555 0143.';
  await expect(page.getByRole('alert')).toHaveText(refusal);
  await expect(page.getByLabel('Phone')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByLabel('Phone')).toHaveValue('555 0100');
  await shoot(page, 'personal-data-refused');
  await page.getByLabel('Phone').fill('');

  await page.getByLabel('Email').fill('Ada.Lovelace@example.com ');
  await page.getByRole('button', { name: 'Find what would be erased' }).click();
  const confirm = page.getByRole('region', { name: 'Erase this person?' });
  await expect(confirm).toContainText('1 report');
  await expect(confirm).toContainText('1 event');
  await expect(confirm).toContainText('not called back');
  await shoot(page, 'personal-data-confirm');
  // Nothing is gone until confirmed.
  expect(await svc.db.query(`select 1 from events where email = 'ada.lovelace@example.com'`)).toHaveLength(1);

  await confirm.getByRole('button', { name: 'Erase permanently' }).click();
  await expect(page.getByRole('status')).toContainText('Erased');
  await expect(page.locator('table')).toContainText('1 report, 1 event, 0 browser snapshots, 0 form submissions');
  expect((await page.content()).toLowerCase()).not.toMatch(/lovelace|augusta/);
  await shoot(page, 'personal-data-erased');

  await page.goto(tracePage);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  expect((await page.content()).toLowerCase()).not.toMatch(/lovelace|cj0kcq-ada/);
  await shoot(page, 'personal-data-erased-event');
});
