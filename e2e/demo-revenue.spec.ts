/**
 * The demo's revenue path in a real browser: an ad click, a signup, then on the welcome page "Upgrade to paid (29 EUR)"
 * (the store's backend reports the later stage with the customer id only, through the signed conversion webhook) and
 * "Refund" (the backend retracts it through the adjustment webhook). The fakes receive the stage with its value and the
 * click of the signup; Microsoft receives the retraction (ApplyOfflineConversionAdjustments); the platforms without
 * one say `unsupported` with the reason, on the welcome page and on the demo's events page. Screenshots of the welcome
 * page after each step and of the events page go to test-results/screenshots/ (desktop and phone).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DEMO_ACCOUNTS } from '../src/demo/index';
import { SERVICE_GLOBAL } from '../src/protocol/install';
import { checkAndShoot } from './support/axe';
import { demoEvents as demoEventsOf, useJourneyService } from './support/journey-service';
import { expect, test } from './support/test';

const SHOTS = join(import.meta.dirname, '..', 'test-results', 'screenshots');
const PLATFORMS = ['google-ads', 'meta', 'microsoft-ads', 'linkedin', 'reddit', 'tiktok'];

const journey = useJourneyService();

interface ApiEvent {
  id: string;
  trigger_type: string | null;
  customer_event_id: string | null;
  customer_id: string | null;
  value: number | null;
  currency: string | null;
  click_ids: Record<string, string> | null;
  status: string;
  actions: Array<{ destination: string; status: string }>;
  adjustments: Array<{ adjustment_id: string; type: string; results: Array<{ destination: string; status: string; reason: string | null }> }>;
}

async function demoEvent(customerEventId: string): Promise<ApiEvent | undefined> {
  return (await demoEventsOf<ApiEvent>(journey)).find((e) => e.customer_event_id === customerEventId);
}

test('signup → upgrade to paid (29 EUR) → refund on the demo: the stage and the retraction reach the fakes', async ({ page }) => {
  // Three pages checked with axe at two widths, on a shared machine: generous, never a timed assertion.
  test.setTimeout(240_000);
  const clicks = {
    gclid: `TeSt-rev-${randomBytes(6).toString('hex')}`,
    fbclid: `TeSt-fb-${randomBytes(6).toString('hex')}`,
    msclkid: randomBytes(16).toString('hex'),
    li_fat_id: randomUUID(),
    rdt_cid: BigInt(`0x${randomBytes(8).toString('hex')}`).toString(),
    ttclid: `E.C.P.TeSt-${randomBytes(6).toString('hex')}`,
  };
  await page.goto(`${journey.demo.url}/?${new URLSearchParams(clicks)}`);
  await page.getByRole('link', { name: 'See pricing and sign up' }).click();
  await page.waitForFunction(
    (global) => typeof (window as unknown as Record<string, { captureSaasSignupIntent?: unknown }>)[global]?.captureSaasSignupIntent === 'function',
    SERVICE_GLOBAL,
  );
  await page.getByLabel('Work email').fill(`grace.${randomBytes(3).toString('hex')}@example.com`);
  await page.getByLabel('Your name').fill('Grace Hopper');
  await page.getByRole('button', { name: 'Create my account' }).click();
  await expect(page).toHaveURL(/\/welcome\?user=usr_/);
  const userId = new URL(page.url()).searchParams.get('user')!;

  // The signup reached cnv (the upgrade needs its customer): the plan card offers the upgrade.
  await expect(page.locator('[data-step="report"]')).toHaveAttribute('data-state', 'done', { timeout: 15_000 });
  await expect(page.locator('#plan')).toHaveAttribute('data-plan', 'trial');
  await page.getByRole('button', { name: 'Upgrade to paid (29 EUR)' }).click();
  await expect(page).toHaveURL(new RegExp(`/welcome\\?user=${userId}#plan$`));
  await expect(page.locator('#plan')).toHaveAttribute('data-plan', 'paid');
  await expect(page.locator('#plan h2')).toContainText('EUR 29.00');

  // The stage found the signup's click through the customer id, and went to all six platforms with its value.
  await expect(page.locator('[data-step="upgrade"]')).toHaveAttribute('data-state', 'done', { timeout: 15_000 });
  await expect(page.locator('[data-step="upgrade"]')).toContainText('identity: the click of the signup with this customer_id');
  const stageStep = page.locator('li[data-step^="deliveries:"]', { hasText: 'the paid plan' });
  await expect(stageStep).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  await expect(stageStep.locator('h3')).toContainText('Delivered to 6 ad platforms: the paid plan, EUR 29.00');
  const stage = await demoEvent(`${userId}.paid`);
  expect(stage).toMatchObject({ trigger_type: 'conversion', customer_id: userId, value: 29, currency: 'EUR', click_ids: clicks, status: 'completed' });
  const { fakes } = journey.demo;
  const microsoftStage = fakes.microsoft.requests.find(
    (r) => r.path.endsWith('/OfflineConversions/Apply') && r.body.OfflineConversions.some((c: Record<string, unknown>) => c.MicrosoftClickId === clicks.msclkid && c.ConversionValue === 29),
  );
  expect(microsoftStage?.body.OfflineConversions[0]).toMatchObject({ ConversionName: DEMO_ACCOUNTS.microsoft.paidGoalName, ConversionCurrencyCode: 'EUR' });
  expect(microsoftStage?.problems).toEqual([]);
  await checkAndShoot(page, SHOTS, 'demo-revenue', 'upgraded');

  // The refund: a retraction, applied after the stage's delivery.
  await page.getByRole('button', { name: 'Refund' }).click();
  await expect(page.locator('#plan')).toHaveAttribute('data-plan', 'refunded');
  const refundStep = page.locator('li[data-step^="adjustment:"]');
  await expect(refundStep).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  await expect(refundStep.locator('[data-delivery="microsoft-ads"]')).toHaveAttribute('data-state', 'done');
  await expect(refundStep.locator('[data-delivery="microsoft-ads"] [data-request-body]')).toContainText('"AdjustmentType": "Retract"');
  for (const other of ['google-ads', 'meta', 'linkedin', 'reddit', 'tiktok']) {
    await expect(refundStep.locator(`[data-delivery="${other}"]`)).toHaveAttribute('data-state', 'skipped');
    await expect(refundStep.locator(`[data-delivery="${other}"] [data-delivery-status]`)).toHaveText('unsupported');
  }
  const retracted = await demoEvent(`${userId}.paid`);
  expect(retracted?.adjustments).toHaveLength(1);
  const results = retracted!.adjustments[0]!.results;
  expect(results.map((r) => r.destination)).toEqual(PLATFORMS);
  expect(results.find((r) => r.destination === 'microsoft-ads')).toEqual({ destination: 'microsoft-ads', status: 'adjusted', reason: null });
  for (const r of results.filter((x) => x.destination !== 'microsoft-ads')) {
    expect(r.status).toBe('unsupported');
    // A sentence that names the platform (the issue-20 work makes Reddit's and TikTok's reasons their own).
    expect(r.reason).toMatch(new RegExp(`(Google|Meta|LinkedIn|Reddit|TikTok).*\\.$`));
  }
  const retraction = fakes.microsoft.requests.filter((r) => r.path.endsWith('/OfflineConversionAdjustments/Apply'));
  expect(retraction).toHaveLength(1);
  expect(retraction[0]!.problems).toEqual([]);
  expect(retraction[0]!.body.OfflineConversionAdjustments).toEqual([
    expect.objectContaining({ AdjustmentType: 'Retract', ConversionName: DEMO_ACCOUNTS.microsoft.paidGoalName, MicrosoftClickId: clicks.msclkid }),
  ]);
  await checkAndShoot(page, SHOTS, 'demo-revenue', 'refunded');

  // The demo's events page: the stage with its value, and the retraction per platform with the reasons.
  await page.goto(`${journey.demo.url}/events`);
  const stageRow = page.locator(`tr[data-event="${stage!.id}"]`);
  await expect(stageRow).toHaveAttribute('data-trigger-type', 'conversion');
  await expect(stageRow.locator('[data-value]')).toHaveText('EUR 29.00');
  const adjustmentRow = page.locator(`tr[data-adjustment="${userId}.refund"]`);
  await expect(adjustmentRow).toContainText('Retracted (refund)');
  await expect(adjustmentRow.locator('[data-destination="microsoft-ads"]')).toHaveAttribute('data-adjustment-status', 'adjusted');
  await expect(adjustmentRow.locator('[data-destination="meta"]')).toHaveAttribute('data-adjustment-status', 'unsupported');
  await expect(adjustmentRow.locator('[data-destination="google-ads"]')).toContainText('restate its value to 0');
  await checkAndShoot(page, SHOTS, 'demo-revenue', 'events');
});

test("the demo's addresses break only where they must: the ribbon's service URL stays whole on a phone", async ({ page }) => {
  /** How many lines the text from `from` to `to` in the element's text spans. */
  const linesOf = (selector: string, from: string, to: string) =>
    page.locator(selector).evaluate(
      (code, [a, b]) => {
        const text = code.firstChild as Text;
        const range = document.createRange();
        range.setStart(text, text.data.indexOf(a!));
        range.setEnd(text, text.data.indexOf(b!) + b!.length);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      },
      [from, to],
    );
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(journey.demo.url);
  // It broke anywhere ("htt" / "p://127.0.0.1:…") where it fitted on a line of its own.
  const service = (await page.locator('.ribbon code').textContent())!;
  expect(service).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(await linesOf('.ribbon code', service, service)).toBe(1);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.reload();
  // The footer's snippet breaks where a URL may (a space, after a slash), not inside site_key ("?sit" / "e_key=…").
  expect(await linesOf('footer code', 'site_key=', '"></script>')).toBe(1);
});
