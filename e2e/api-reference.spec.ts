/**
 * The API reference at /docs/api in real Chromium against the real service: Swagger UI, served by the service from its
 * own copy of swagger-ui-dist under a CSP that allows only the service's origin, renders the OpenAPI document with every
 * resource, the bearer scheme and the webhook's signature scheme, requests nothing from another host, and breaks no
 * policy. Screenshots at a desktop and a phone width go to test-results/screenshots/.
 */
import { join } from 'node:path';
import { expect, test } from './support/test';
import { startRealService, type RunningService } from './support/real-service';

const SHOTS = join(import.meta.dirname, '..', 'test-results', 'screenshots');

let svc: RunningService;
let origin: string;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  svc = await startRealService('cnv.test', { CNV_SECRET_KEY: '5'.repeat(64) });
  origin = `http://cnv.test:${svc.port}`;
});

test.afterAll(async () => {
  await svc?.close();
});

test('renders the OpenAPI document from the service alone, under its CSP', async ({ page }) => {
  // Swagger UI is a megabyte of script rendering a large document: seconds on a quiet machine, far more on a busy one.
  test.setTimeout(120_000);
  const foreign: string[] = [];
  const violations: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.origin !== origin) foreign.push(request.url());
  });
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  await page.setViewportSize({ width: 1280, height: 900 });
  const response = await page.goto(`${origin}/docs/api`);
  expect(response?.status()).toBe(200);
  await expect(page.getByRole('heading', { name: /cnv conversion tracking API/ })).toBeVisible();
  for (const tag of ['Sites', 'Handoffs', 'Flows', 'Events', 'Destinations', 'Webhook']) {
    await expect(page.locator(`#operations-tag-${tag}`)).toBeVisible();
  }
  await expect(page.getByText('/v1/sites/{id}').first()).toBeVisible();
  await expect(page.getByText('/api/webhook-bridge/saas-signup/{site_key}/{trigger_key}')).toBeVisible();
  await page.screenshot({ path: join(SHOTS, 'api-reference-desktop.png'), fullPage: false });

  // One operation opened: its parameters and its answers, the error envelope among them.
  await page.locator('#operations-Webhook-reportSignup').click();
  await expect(page.getByText('X-Service-Signature').first()).toBeVisible();
  await expect(page.locator('#operations-Webhook-reportSignup .responses-table')).toContainText('401');
  await page.screenshot({ path: join(SHOTS, 'api-reference-webhook-desktop.png'), fullPage: false });

  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(SHOTS, 'api-reference-phone.png'), fullPage: false });

  expect(foreign).toEqual([]);
  expect(violations).toEqual([]);
});
