/** Consent: data-consent-required, consent(false), Google Consent Mode v2 in dataLayer, and Global Privacy Control. */
import type { Page } from '@playwright/test';
import { CLICK_COOKIE, CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../src/protocol/cookies';
import { CollectorTraffic, expectCollectorRequests, snapshotBody } from './support/collector-traffic';
import { fixtureUrl, type E2EEnv } from './support/env';
import {
  captureIntent,
  cookieNamed,
  expect,
  expectNoNewGlobals,
  expectSnapshotStored,
  giveConsent,
  loaderCookies,
  loaderReady,
  storageEntries,
  test,
} from './support/test';
import { QUICK_POLL } from './support/poll';

/** Asserts the not-consented state: the API resolves null and sends nothing; no cookie, no storage. */
async function expectNotConsented(page: Page, traffic: CollectorTraffic): Promise<void> {
  await expectCollectorRequests(
    traffic,
    page,
    async () => expect(await captureIntent(page), 'captureSaasSignupIntent() without consent').toBeNull(),
    { notSent: [{ kind: 'snapshot' }] },
  );
  expect(await loaderCookies(page.context()), 'cookies without consent').toEqual([]);
  expect(await storageEntries(page), 'storage without consent').toEqual({ session: 0, local: 0 });
}

/** Asserts an intent is captured and its snapshot carries the landing's gclid; returns the token. */
async function expectCapturedWithClick(page: Page, traffic: CollectorTraffic, env: E2EEnv, gclid: string): Promise<string> {
  let token: string | null = null;
  const calls = await expectCollectorRequests(
    traffic,
    page,
    async () => {
      token = await captureIntent(page);
    },
    { sent: [{ kind: 'snapshot', times: 1 }] },
  );
  expect(token).toMatch(CORRELATION_TOKEN_PATTERN);
  const snapshotCall = calls.find((c) => c.kind === 'snapshot')!;
  expect(snapshotBody(snapshotCall)).toMatchObject({ correlation_token: token, trigger: 'api', touch: { click_ids: { gclid } } });
  await expectSnapshotStored(env, snapshotCall);
  return token!;
}

/** Makes the page report `navigator.globalPrivacyControl === true`, as a browser with GPC on does. */
async function emulateGpc(page: Page): Promise<void> {
  await page.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true, configurable: true });
  });
}

test('with data-consent-required nothing is written or sent until consent(true), and the landing click is then kept', async ({
  page,
  context,
  traffic,
  env,
  blankGlobals,
}) => {
  await page.goto(fixtureUrl('www', '/consent-required.html?gclid=before-consent'));
  await loaderReady(page, traffic);
  await expectNotConsented(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);

  // Remove the click params from the address bar, as a router would: the click read at boot is still in memory.
  await page.evaluate(() => history.replaceState({}, '', '/consent-required.html'));
  await giveConsent(page, true);
  await expect.poll(async () => (await cookieNamed(context, CLICK_COOKIE)) !== undefined, { message: 'cnv_click after consent', ...QUICK_POLL }).toBe(true);
  await expectCapturedWithClick(page, traffic, env, 'before-consent');
});

test('consent(false) stops the loader and deletes its cookies; consent(true) starts it again', async ({ page, context, traffic, env, blankGlobals }) => {
  await page.goto(fixtureUrl('www', '/signup.html?gclid=withdrawn'));
  await loaderReady(page, traffic);
  await expectCapturedWithClick(page, traffic, env, 'withdrawn');
  expect((await loaderCookies(context)).map((c) => c.name).sort()).toEqual([CLICK_COOKIE, CORRELATION_COOKIE].sort());

  await giveConsent(page, false);
  // The page deletes them at once; the browser's cookie store (which the test reads) hears of it a moment later.
  await expect.poll(() => loaderCookies(context), { message: 'cookies after consent(false)', ...QUICK_POLL }).toEqual([]);
  await expectCollectorRequests(
    traffic,
    page,
    async () => {
      expect(await captureIntent(page)).toBeNull();
      await Promise.all([page.waitForURL(/\/signup$/), page.getByRole('button', { name: 'Create account' }).click()]);
    },
    { notSent: [{ kind: 'snapshot' }] },
  );
  expect(await loaderCookies(context), 'cookies after a submit without consent').toEqual([]);

  await page.goBack();
  await loaderReady(page, traffic);
  await giveConsent(page, true);
  const calls = await expectCollectorRequests(traffic, page, () => captureIntent(page), { sent: [{ kind: 'snapshot', times: 1 }] });
  expect(snapshotBody(calls.find((c) => c.kind === 'snapshot')!).correlation_token).toMatch(CORRELATION_TOKEN_PATTERN);
  await expectNoNewGlobals(page, blankGlobals);
});

test('Google Consent Mode v2: ad_storage denied by default keeps the loader off until an update grants it', async ({
  page,
  context,
  traffic,
  env,
  blankGlobals,
}) => {
  await page.goto(fixtureUrl('www', '/consent-mode.html?gclid=consent-mode'));
  await loaderReady(page, traffic);
  await expectNotConsented(page, traffic);
  await expectNoNewGlobals(page, blankGlobals, ['dataLayer', 'gtag']);

  await page.evaluate(() => {
    (window as unknown as { gtag(...args: unknown[]): void }).gtag('consent', 'update', { ad_storage: 'granted', ad_user_data: 'granted' });
  });
  await expect.poll(async () => (await cookieNamed(context, CLICK_COOKIE)) !== undefined, { message: 'cnv_click after the update', ...QUICK_POLL }).toBe(true);
  await expectCapturedWithClick(page, traffic, env, 'consent-mode');

  // A later update that denies again (the visitor withdrew in the banner) is followed too, and deletes the cookies:
  // the click kept and the correlation token the backend would otherwise still report.
  expect(await cookieNamed(context, CORRELATION_COOKIE)).toBeDefined();
  await page.evaluate(() => {
    (window as unknown as { gtag(...args: unknown[]): void }).gtag('consent', 'update', { ad_storage: 'denied' });
  });
  await expect.poll(async () => [await cookieNamed(context, CLICK_COOKIE), await cookieNamed(context, CORRELATION_COOKIE)], {
    message: 'both cookies deleted on the denying update',
    ...QUICK_POLL,
  }).toEqual([undefined, undefined]);
  await expectCollectorRequests(traffic, page, async () => expect(await captureIntent(page)).toBeNull(), {
    notSent: [{ kind: 'snapshot' }],
  });
});

test('Global Privacy Control turns the loader off on a site that honors it (the default)', async ({
  browser,
  page,
  traffic,
  env,
  blankGlobals,
}) => {
  await emulateGpc(page);
  const url = fixtureUrl('www', '/signup.html?gclid=gpc');
  await page.goto(url);
  expect(await page.evaluate(() => (navigator as Navigator & { globalPrivacyControl?: boolean }).globalPrivacyControl)).toBe(true);
  await loaderReady(page, traffic);
  expect(traffic.of('config').map((c) => c.siteKey)).toContain(env.sites.main.key);
  await expectNotConsented(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);
  await expectCollectorRequests(
    traffic,
    page,
    () => Promise.all([page.waitForURL(/\/signup$/), page.getByRole('button', { name: 'Create account' }).click()]),
    { notSent: [{ kind: 'snapshot' }] },
  );
  expect(await loaderCookies(page.context())).toEqual([]);

  // The control: the same page in a browser without GPC is active, so the silence above is GPC's doing.
  const plainContext = await browser.newContext();
  try {
    const plainTraffic = await CollectorTraffic.attach(plainContext, env.serviceOrigin);
    const plainPage = await plainContext.newPage();
    await plainPage.goto(url);
    await loaderReady(plainPage, plainTraffic);
    await expectCapturedWithClick(plainPage, plainTraffic, env, 'gpc');
  } finally {
    await plainContext.close();
  }
});

test('Global Privacy Control is ignored on a site whose config says honor_gpc: false', async ({ page, traffic, env, blankGlobals }) => {
  await emulateGpc(page);
  await page.goto(fixtureUrl('www', '/signup.html?site=noGpc&gclid=gpc-ignored'));
  await loaderReady(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);
  await expectCapturedWithClick(page, traffic, env, 'gpc-ignored');
});
