/**
 * Connecting Reddit on the hosted page, both ways it offers when the service has a Reddit app: the page shows
 * "Sign in with Reddit" beside the conversion access token field; signing in (Reddit's OAuth server is the strict
 * fake, which consents at once) brings the user back to a form that asks only for the pixel ID. Each page passes axe
 * and is shot at a desktop and a phone width (test-results/screenshots/reddit-*.png).
 */
import { join } from 'node:path';
import { expect, test } from './support/test';
import { checkAndShoot } from './support/axe';
import { startRealService, type RunningService } from './support/real-service';
import { FAKE_REDDIT_PIXEL, startFakeReddit, type FakeReddit } from '../src/demo/fakes/reddit';

const SHOTS = join(import.meta.dirname, '..', 'test-results', 'screenshots');

let svc: RunningService;
let reddit: FakeReddit;

test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeAll(async () => {
  test.setTimeout(120_000); // the service's first start (migrations) on a shared machine
  reddit = await startFakeReddit();
  svc = await startRealService('cnv.test', {
    CNV_SECRET_KEY: '6'.repeat(64),
    CNV_REDDIT_API_BASE: reddit.url,
    CNV_REDDIT_OAUTH_AUTHORIZE_URL: reddit.authorizeUrl,
    CNV_REDDIT_OAUTH_TOKEN_URL: reddit.tokenUrl,
    CNV_REDDIT_OAUTH_CLIENT_ID: reddit.clientId,
    CNV_REDDIT_OAUTH_CLIENT_SECRET: reddit.clientSecret,
  });
});

test.afterAll(async () => {
  await svc?.close();
  await reddit?.close();
});

test('Reddit: the hosted page offers the sign-in beside the token; signed in, it asks only for the pixel ID', async ({ page }) => {
  const created = await fetch(`${svc.base}/v1/handoffs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ purpose: 'connect_destination', destination_type: 'reddit' }),
  });
  const handoff = (await created.json()) as { url: string; id: string };
  await page.goto(handoff.url);
  await expect(page.getByRole('heading', { name: 'Connect Reddit to cnv', level: 1 })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Sign in with Reddit' })).toBeVisible();
  await expect(page.getByLabel('Conversion access token')).toBeVisible();
  await checkAndShoot(page, SHOTS, 'reddit', 'connect');

  await page.getByRole('link', { name: 'Sign in with Reddit' }).click();
  await expect(page.getByText('Signed in with Reddit.')).toBeVisible();
  await expect(page.getByLabel('Conversion access token')).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'Sign in with Reddit' })).toHaveCount(0);
  await checkAndShoot(page, SHOTS, 'reddit', 'signed-in');

  await page.getByLabel('Pixel ID').fill(FAKE_REDDIT_PIXEL);
  await page.getByRole('button', { name: 'Connect Reddit' }).click();
  await expect(page.getByRole('heading', { name: 'Reddit is connected to cnv' })).toBeVisible();
  await expect(page.getByRole('status')).toContainText(`Reddit pixel ${FAKE_REDDIT_PIXEL}, signed in`);
  await checkAndShoot(page, SHOTS, 'reddit', 'connected');
  expect(reddit.requests.flatMap((r) => r.problems)).toEqual([]);
  expect(reddit.requests.map((r) => r.path)).toEqual(['/api/v1/authorize', '/api/v1/access_token']);
});

/** A connect link of Reddit made through the API: its hosted page's address. */
async function connectLink(on: RunningService): Promise<string> {
  const created = await fetch(`${on.base}/v1/handoffs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${on.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ purpose: 'connect_destination', destination_type: 'reddit' }),
  });
  return ((await created.json()) as { url: string }).url;
}

test('an older connect link opened after a newer one was completed changes nothing, and its page says so', async ({ page }) => {
  const older = await connectLink(svc);
  const newer = await connectLink(svc);
  await page.goto(newer);
  await page.getByRole('link', { name: 'Sign in with Reddit' }).click();
  await page.getByLabel('Pixel ID').fill(FAKE_REDDIT_PIXEL);
  await page.getByRole('button', { name: 'Connect Reddit' }).click();
  await expect(page.getByRole('heading', { name: 'Reddit is connected to cnv' })).toBeVisible();

  // Opened again, the older link says so at once: no detour through Reddit's consent screen.
  const requestsBefore = reddit.requests.length;
  expect((await page.goto(older))?.status()).toBe(409);
  await expect(page.getByRole('heading', { name: 'A newer connect link was used' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Sign in with Reddit' })).toHaveCount(0);
  expect(reddit.requests.length).toBe(requestsBefore);
  await expect(page.getByRole('alert')).toContainText('The Reddit account connected through it stays connected; nothing was changed here.');
  await checkAndShoot(page, SHOTS, 'reddit', 'superseded');
});

test("Reddit refusing the service's own OAuth client at the sign-in: the page says the service's setup is at fault", async ({ page }) => {
  // The same fake Reddit, and a service whose Reddit app secret is not the app's (rotated at Reddit, say).
  const misconfigured = await startRealService('cnv.test', {
    CNV_SECRET_KEY: '7'.repeat(64),
    CNV_REDDIT_API_BASE: reddit.url,
    CNV_REDDIT_OAUTH_AUTHORIZE_URL: reddit.authorizeUrl,
    CNV_REDDIT_OAUTH_TOKEN_URL: reddit.tokenUrl,
    CNV_REDDIT_OAUTH_CLIENT_ID: reddit.clientId,
    CNV_REDDIT_OAUTH_CLIENT_SECRET: `${reddit.clientSecret}-old`,
  });
  try {
    await page.goto(await connectLink(misconfigured));
    await page.getByRole('link', { name: 'Sign in with Reddit' }).click();
    await expect(page.getByRole('alert')).toContainText("This cnv service's setup is at fault, not your sign-in.");
    await expect(page.getByText('CNV_REDDIT_OAUTH_CLIENT_SECRET')).toBeVisible();
    await checkAndShoot(page, SHOTS, 'reddit', 'client-refused');
  } finally {
    await misconfigured.close();
  }
});
