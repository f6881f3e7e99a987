/**
 * Issue 10: the seven journeys that used to lose the click, in real Chromium against the real service, from the ad
 * landing to the upload at the fake ad platform: the snapshot the collector stored under the token the customer's
 * backend received, then that backend's signup report (the real client, signed webhook) and the click id the service
 * uploaded to the fake Google's Data Manager API.
 */
import { CLICK_COOKIE, CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../src/protocol/cookies';
import { expectCollectorRequests, snapshotBody, type CollectorCall } from './support/collector-traffic';
import { readCorrelationToken } from '../src/client';
import { fixtureOrigin, fixtureUrl, secureFixtureUrl } from './support/env';
import { recordedRequests, storedSnapshot } from './support/fixture-server';
import { captureIntent, cookieNamed, expect, expectNoNewGlobals, expectSnapshotStored, giveConsent, loaderReady, test } from './support/test';
import { QUICK_POLL } from './support/poll';
import type { Page } from '@playwright/test';
import type { CollectorTraffic } from './support/collector-traffic';
import type { E2EEnv, SiteName } from './support/env';
import { reportAndAwaitUpload } from './support/upload';

/** Submits the page's signup form and returns the one snapshot call it caused, with the token the backend received. */
async function signUp(page: Page, traffic: CollectorTraffic, env: E2EEnv, button = page.getByRole('button', { name: 'Create account' })) {
  const calls = await expectCollectorRequests(traffic, page, () => Promise.all([page.waitForURL(/\/signup$/), button.click()]), {
    sent: [{ kind: 'snapshot', times: 1 }],
  });
  const call = calls.find((c) => c.kind === 'snapshot')!;
  const token = snapshotBody(call).correlation_token;
  const atBackend = (await recordedRequests(env.fixtureControl)).filter((r) => r.path === '/signup' && r.cookie.includes(`${CORRELATION_COOKIE}=${token}`));
  expect(atBackend, 'the signup request carried the token of the snapshot').toHaveLength(1);
  return { call, token };
}

/** The backend reports the signup with `token`; the upload to Google Ads must carry `gclid`. */
async function expectUploadedGclid(env: E2EEnv, site: SiteName, token: string, gclid: string): Promise<void> {
  expect(await reportAndAwaitUpload(env, site, token), 'the click id uploaded to Google Ads').toMatchObject({ clickIdKind: 'gclid', clickId: gclid });
}

/** The click ids the real service stored for the snapshot call's token. */
async function storedClickIds(env: E2EEnv, call: CollectorCall): Promise<Record<string, string>> {
  const stored = await expectSnapshotStored(env, call);
  return ((stored.touch as { click_ids?: Record<string, string> } | null)?.click_ids ?? {}) as Record<string, string>;
}

test('1. an ad click, then a UTM-only newsletter visit, then signup: the stored snapshot keeps the gclid', async ({ page, traffic, env }) => {
  await page.goto(fixtureUrl('www', '/landing.html?gclid=J1-ad&utm_source=google&utm_medium=cpc'));
  await loaderReady(page, traffic);
  await page.goto(fixtureUrl('www', '/landing.html?utm_source=newsletter&utm_medium=email&utm_campaign=weekly'));
  await loaderReady(page, traffic);
  expect(decodeURIComponent((await cookieNamed(page.context(), CLICK_COOKIE))!.value)).toContain('J1-ad');

  await page.goto(fixtureUrl('www', '/signup.html'));
  await loaderReady(page, traffic);
  const { call, token } = await signUp(page, traffic, env);
  expect(snapshotBody(call).touch).toMatchObject({ click_ids: { gclid: 'J1-ad' }, utm: { utm_source: 'google', utm_medium: 'cpc' } });
  expect(await storedClickIds(env, call)).toEqual({ gclid: 'J1-ad' });
  await expectUploadedGclid(env, 'main', token, 'J1-ad');
});

test('2. gclid A, an abandoned SSO attempt, then gclid B and signup: a fresh token, stored with B', async ({ page, traffic, env }) => {
  await page.goto(fixtureUrl('www', '/landing.html?gclid=J2-A'));
  await loaderReady(page, traffic);
  const abandoned = await captureIntent(page);
  expect(abandoned).toMatch(CORRELATION_TOKEN_PATTERN);

  await page.goto(fixtureUrl('www', '/landing.html?gclid=J2-B'));
  await loaderReady(page, traffic);
  expect(await cookieNamed(page.context(), CORRELATION_COOKIE), 'the newer click ended the older token').toBeUndefined();
  await page.goto(fixtureUrl('www', '/signup.html'));
  await loaderReady(page, traffic);
  const { call, token } = await signUp(page, traffic, env);
  expect(token).not.toBe(abandoned);
  expect(await storedClickIds(env, call)).toEqual({ gclid: 'J2-B' });
  await expectUploadedGclid(env, 'main', token, 'J2-B');
});

test('2b. two touches reaching one token: the collector keeps the newer captured_at and every click id', async ({ page, traffic, env }) => {
  // The collector's merge (server side of issue 10): the newer touch wins whole, and received_click_ids keeps every click id.
  await page.goto(fixtureUrl('www', '/signup.html'));
  await loaderReady(page, traffic);
  const token = 'J2bJ2bJ2bJ2bJ2bJ2bJ2bJ';
  const post = (clickIds: Record<string, string>, capturedAt: string) =>
    page.evaluate(
      async ([url, body]) => (await fetch(url!, { method: 'POST', body })).status,
      [
        `${env.serviceOrigin}/collect/v1/sites/${env.sites.main.key}/snapshots`,
        JSON.stringify({
          correlation_token: token,
          occurred_at: new Date().toISOString(),
          trigger: 'api',
          page_url: page.url(),
          referrer: null,
          touch: { click_ids: clickIds, utm: {}, landing_page_url: page.url(), referrer: null, captured_at: capturedAt },
          cookies: {},
        }),
      ] as const,
    );
  // What an earlier loader did: the older click's snapshot first, then the newer click under the same token.
  expect(await post({ gclid: 'J2b-A', fbclid: 'J2b-F' }, '2026-11-20T10:00:00.000Z')).toBe(204);
  expect(await post({ gclid: 'J2b-B' }, '2026-11-21T10:00:00.000Z')).toBe(204);
  const storedTouch = async () => (await storedSnapshot(env.fixtureControl, env.sites.main.id, token))?.touch as { captured_at?: string } | null | undefined;
  await expect.poll(async () => (await storedTouch())?.captured_at, { message: 'the newer captured_at wins', ...QUICK_POLL }).toBe('2026-11-21T10:00:00.000Z');
  const stored = await storedSnapshot(env.fixtureControl, env.sites.main.id, token);
  // The newer touch, whole: the older campaign's click ids never mix into it.
  expect((stored!.touch as { click_ids: Record<string, string> }).click_ids).toEqual({ gclid: 'J2b-B' });
  expect(stored!.received_click_ids).toEqual({ gclid: ['J2b-A', 'J2b-B'], fbclid: ['J2b-F'] });
  // The delivered touch is the newer one.
  await expectUploadedGclid(env, 'main', token, 'J2b-B');
});

test('3. a router strips the query before the async loader runs: the click comes from the navigation entry', async ({ page, traffic, env }) => {
  await page.goto(fixtureUrl('www', '/router-strip.html?site=main&gclid=J3-routed&utm_campaign=spring'));
  await loaderReady(page, traffic);
  expect(page.url(), 'the router cleaned the address bar first').toBe(fixtureUrl('www', '/router-strip.html?site=main'));
  const { call, token } = await signUp(page, traffic, env);
  expect(snapshotBody(call).touch).toMatchObject({ click_ids: { gclid: 'J3-routed' }, utm: { utm_campaign: 'spring' } });
  expect(await storedClickIds(env, call)).toEqual({ gclid: 'J3-routed' });
  await expectUploadedGclid(env, 'main', token, 'J3-routed');
});

test('4. an SSO callback posted cross-site: the token travels in the state and reaches the backend (the SSO recipe)', async ({ page, traffic, env }) => {
  await page.goto(fixtureUrl('www', '/landing.html?gclid=J4-sso'));
  await loaderReady(page, traffic);
  await page.goto(fixtureUrl('www', '/sso-start.html'));
  await loaderReady(page, traffic);
  const since = traffic.calls.length;
  await Promise.all([page.waitForURL(/sso-idp\.html/), page.getByRole('button', { name: /identity provider/ }).click()]);
  const { body, call } = await traffic.waitForSnapshot(since);
  const token = body.correlation_token;
  expect(new URL(page.url()).searchParams.get('state')).toBe(token);

  // The identity provider (another site) posts its answer to the app's callback.
  await Promise.all([page.waitForURL(/\/api\/sso\/callback$/), page.getByRole('button', { name: 'Return to the app' }).click()]);
  const callback = (await recordedRequests(env.fixtureControl)).filter((r) => r.path === '/api/sso/callback' && r.body.includes(token));
  expect(callback).toHaveLength(1);
  // On http the cookie is SameSite=Lax, so this cross-site POST carries no cookie: the state is what the backend hands
  // to the client (`correlationToken`). On https the loader writes SameSite=None; Secure and the cookie arrives too:
  // journey 4b below.
  expect(callback[0]!.method).toBe('POST');
  expect(callback[0]!.cookie).not.toContain(CORRELATION_COOKIE);
  expect(await storedClickIds(env, call)).toEqual({ gclid: 'J4-sso' });
  // The backend reports with the token the state carried.
  await expectUploadedGclid(env, 'main', token, 'J4-sso');
});

test.describe('over https', () => {
  // The fixture site and the service (behind its TLS proxy) with a throwaway self-signed certificate: see global-setup.ts.
  test.use({ overHttps: true, ignoreHTTPSErrors: true });

  test('4b. an SSO callback posted cross-site over https: the SameSite=None; Secure cookie arrives with it and the backend reads the token there', async ({
    page,
    traffic,
    env,
  }) => {
    const port = env.https.fixturePort;
    await page.goto(secureFixtureUrl('www', '/landing.html?site=secure&gclid=J4b-sso'));
    await loaderReady(page, traffic);
    expect(await page.evaluate(() => window.isSecureContext), 'the accepted certificate still makes a secure context').toBe(true);
    await page.goto(secureFixtureUrl('www', '/sso-start.html?site=secure'));
    await loaderReady(page, traffic);
    const since = traffic.calls.length;
    await Promise.all([page.waitForURL(/sso-idp\.html/), page.getByRole('button', { name: /identity provider/ }).click()]);
    const { body, call } = await traffic.waitForSnapshot(since);
    const token = body.correlation_token;
    expect(call.url.origin, 'the snapshot went to the service over https').toBe(env.https.serviceOrigin);
    expect(page.url()).toBe(`https://idp.example.net:${port}/sso-idp.html?state=${token}`);
    expect(await cookieNamed(page.context(), CORRELATION_COOKIE), 'what the loader wrote on the https page').toMatchObject({
      value: token,
      domain: '.example.com',
      path: '/',
      sameSite: 'None',
      secure: true,
      httpOnly: false,
    });

    // The identity provider (another site, https too) posts its answer to the app's callback.
    await Promise.all([page.waitForURL(/\/api\/sso\/callback$/), page.getByRole('button', { name: 'Return to the app' }).click()]);
    const callback = (await recordedRequests(env.fixtureControl)).filter((r) => r.path === '/api/sso/callback' && r.body.includes(token));
    expect(callback).toHaveLength(1);
    expect(callback[0]).toMatchObject({ method: 'POST', scheme: 'https', host: `www.example.com:${port}` });
    // SameSite=None: the cross-site POST carries the cookie, so the backend needs no state to find the token.
    expect(callback[0]!.cookie).toContain(`${CORRELATION_COOKIE}=${token}`);
    expect(readCorrelationToken(callback[0]!.cookie), 'the token the client reads from the callback Cookie header').toBe(token);
    expect(await storedClickIds(env, call)).toEqual({ gclid: 'J4b-sso' });
    // The backend hands the client the Cookie header of the callback; the client reads the token from it.
    expect(await reportAndAwaitUpload(env, 'secure', { cookieHeader: callback[0]!.cookie }), 'the click id uploaded to Google Ads').toMatchObject({
      clickIdKind: 'gclid',
      clickId: 'J4b-sso',
    });
  });
});

test('5. a signup form inside a web component (open shadow root) is seen through the click composedPath()', async ({ page, traffic, env }) => {
  await page.goto(fixtureUrl('www', '/landing.html?gclid=J5-shadow'));
  await loaderReady(page, traffic);
  await page.goto(fixtureUrl('www', '/shadow-signup.html'));
  await loaderReady(page, traffic);
  // Playwright's role locators pierce open shadow roots, as a visitor's click does.
  const { call, token } = await signUp(page, traffic, env);
  expect(snapshotBody(call).trigger).toBe('form_submit');
  expect(await storedClickIds(env, call)).toEqual({ gclid: 'J5-shadow' });
  await expectUploadedGclid(env, 'main', token, 'J5-shadow');
});

test('6. consent given on page two: data-url-passthrough carries the landing click there, writing and sending nothing before', async ({
  page,
  traffic,
  env,
  blankGlobals,
}) => {
  const pricing = `${fixtureOrigin('app')}/passthrough-pricing.html?site=main`;
  await expectCollectorRequests(
    traffic,
    page,
    async () => {
      await page.goto(fixtureUrl('www', '/passthrough-landing.html?gclid=J6-pass&utm_source=google'));
      await loaderReady(page, traffic);
      await Promise.all([page.waitForURL(/passthrough-pricing/), page.getByRole('link', { name: 'Pricing' }).click()]);
      await loaderReady(page, traffic);
    },
    { notSent: [{ kind: 'snapshot' }] },
  );
  expect(page.url()).toBe(`${pricing}&gclid=J6-pass&utm_source=google`);
  expect(await page.context().cookies(), 'nothing written before consent').toEqual([]);
  await expectNoNewGlobals(page, blankGlobals);

  await giveConsent(page, true);
  await expect.poll(async () => decodeURIComponent((await cookieNamed(page.context(), CLICK_COOKIE))?.value ?? ''), QUICK_POLL).toContain('J6-pass');
  const { call, token } = await signUp(page, traffic, env);
  expect(await storedClickIds(env, call)).toEqual({ gclid: 'J6-pass' });
  await expectUploadedGclid(env, 'main', token, 'J6-pass');
});

test('7. marketing site and app on two registrable domains: data-linker carries the click in _cnv', async ({ page, traffic, env }) => {
  const port = env.fixturePort;
  await page.goto(`http://www.example.com:${port}/linker-marketing.html?site=main&gclid=J7-link&utm_source=google`);
  await loaderReady(page, traffic);
  await Promise.all([page.waitForURL(/app\.example\.net/), page.getByRole('link', { name: 'Start your trial' }).click()]);
  await loaderReady(page, traffic);
  expect(page.url(), '_cnv is removed from the address bar').toBe(`http://app.example.net:${port}/linker-app.html?site=linkerApp`);
  const appCookie = await page.context().cookies(`http://app.example.net:${port}/`);
  expect(decodeURIComponent(appCookie.find((c) => c.name === CLICK_COOKIE)!.value)).toContain('J7-link');

  const { call, token } = await signUp(page, traffic, env);
  expect(call.siteKey).toBe(env.sites.linkerApp.key);
  expect(snapshotBody(call).touch).toMatchObject({
    click_ids: { gclid: 'J7-link' },
    landing_page_url: `http://www.example.com:${port}/linker-marketing.html`, // its query's click kept apart, the rest not at all
  });
  expect(await storedClickIds(env, call)).toEqual({ gclid: 'J7-link' });
  // The app's backend reports for the app's site.
  await expectUploadedGclid(env, 'linkerApp', token, 'J7-link');
});
