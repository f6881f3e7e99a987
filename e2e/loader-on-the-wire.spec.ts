/**
 * The loader on the wire (DESIGN.md, "The loader on the wire"): the install snippet `/loader.js?site_key=KEY` brings
 * the site's config inside the script, so the loader decides at its first act and writes the ad touch before the
 * visitor can leave, with one request per page view, compressed; the older snippet (data-site-key) still works with
 * one config request; a domain changed in the service is seen within a minute.
 */
import type { Page, Response } from '@playwright/test';
import { CLICK_COOKIE } from '../src/protocol/cookies';
import { SERVICE_GLOBAL } from '../src/protocol/install';
import { expectCollectorRequests } from './support/collector-traffic';
import { fixtureOrigin, fixtureUrl } from './support/env';
import { createSite, setDomain } from './support/service-api';
import { cookieNamed, expect, expectNoNewGlobals, expectSnapshotStored, loaderReady, test } from './support/test';

/** A slow mobile network, for what only the older snippet needs: its config answer takes two seconds to come. */
async function slowConfig(page: Page): Promise<void> {
  await page.context().route('**/collect/v1/sites/*/config', async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await route.continue().catch(() => {}); // the page may be gone by then
  });
}

/** The loader's response as the browser received it, caught while `act` runs. */
async function loaderResponse(page: Page, act: () => Promise<unknown>): Promise<Response> {
  const [response] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/loader.js'), act()]);
  return response;
}

test('the install snippet loads the loader with the config inside: one request, compressed, no config request', async ({
  page,
  traffic,
  env,
  blankGlobals,
}) => {
  let response: Response | undefined;
  await expectCollectorRequests(
    traffic,
    page,
    async () => {
      response = await loaderResponse(page, () => page.goto(fixtureUrl('www', '/snippet-landing.html?gclid=wire')));
      await loaderReady(page, traffic);
    },
    { sent: [{ kind: 'loader', times: 1 }], notSent: [{ kind: 'config' }, { kind: 'snapshot' }] },
  );
  expect(traffic.calls.map((c) => c.url.pathname), 'requests to the service on this page view').toEqual(['/loader.js']);
  const headers = response!.headers();
  // Chromium offers brotli to https origins only; this page reaches the service over http.
  const offered = (await response!.request().allHeaders())['accept-encoding'] ?? '';
  expect(headers['content-encoding']).toBe(offered.includes('br') ? 'br' : 'gzip');
  expect(headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=86400');
  expect(headers.vary).toBe('Accept-Encoding');
  expect(headers.etag).toBeTruthy();
  const text = await response!.text();
  expect(text).toContain(`"site_key":"${env.sites.main.key}"`);
  expect(text).not.toContain('sourceMappingURL');
  expect(decodeURIComponent((await cookieNamed(page.context(), CLICK_COOKIE))!.value)).toContain('"gclid":"wire"');
  await expectNoNewGlobals(page, blankGlobals);
});

test('a landing whose own script moves on at once (at its load event) keeps the click for the signup on the next page', async ({
  page,
  context,
  traffic,
  env,
}) => {
  await slowConfig(page);
  await page.goto(fixtureUrl('www', '/moves-on.html?gclid=moved&utm_source=google'));
  await expect(page).toHaveURL(fixtureUrl('www', '/pricing.html'));
  expect(decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))!.value)).toContain('"gclid":"moved"');

  await loaderReady(page, traffic);
  const calls = await expectCollectorRequests(
    traffic,
    page,
    () => Promise.all([page.waitForURL(`${fixtureOrigin('app')}/signup`), page.getByRole('button', { name: 'Create account' }).click()]),
    { sent: [{ kind: 'snapshot', siteKey: env.sites.main.key, times: 1 }] },
  );
  const stored = await expectSnapshotStored(env, calls.find((c) => c.kind === 'snapshot')!);
  expect(JSON.stringify(stored)).toContain('moved');
});

test('a visitor who leaves the landing 30 ms after it loaded, on a slow network, keeps the click', async ({ page, context, traffic }) => {
  await slowConfig(page);
  await page.goto(fixtureUrl('www', '/snippet-landing.html?gclid=bounce'));
  await page.waitForTimeout(30); // the visitor's 30 ms on the page: a behaviour, not a timing assertion
  await page.goto(fixtureUrl('www', '/blank.html'));
  expect(traffic.of('config'), 'the install snippet makes no config request').toHaveLength(0);
  expect(decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))!.value)).toContain('"gclid":"bounce"');
});

test('the older snippet (data-site-key) still works: the plain loader makes one config request, then keeps the click', async ({
  page,
  context,
  traffic,
  env,
}) => {
  let response: Response | undefined;
  await expectCollectorRequests(
    traffic,
    page,
    async () => {
      response = await loaderResponse(page, () => page.goto(fixtureUrl('www', '/landing.html?gclid=older')));
      await loaderReady(page, traffic);
    },
    { sent: [{ kind: 'loader', times: 1 }, { kind: 'config', siteKey: env.sites.main.key, times: 1 }] },
  );
  expect(response!.headers()['content-encoding']).toMatch(/^(br|gzip)$/);
  expect(await response!.text(), 'no config inside').not.toContain('"site_key":');
  expect(await page.evaluate((name) => (window as unknown as Record<string, { ready: Promise<boolean> }>)[name]!.ready, SERVICE_GLOBAL)).toBe(true);
  expect(decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))!.value)).toContain('"gclid":"older"');
});

test('a domain changed in the service is in the next loader fetched: cached for a minute at most', async ({ page, browser, env }) => {
  const site = await createSite(env.serviceBase, env.apiKey, 'Moving shop', 'http://shop.example.org');
  const loaderUrl = `${env.serviceOrigin}/loader.js?site_key=${site.key}`;
  /** Loads the per-site loader into a fixture page the way a tag manager does, and returns its decision. */
  const boot = async (on: Page, url: string) => {
    await on.goto(url);
    return on.evaluate(
      ({ src, name }) =>
        new Promise<boolean>((resolve, reject) => {
          const script = document.createElement('script');
          script.src = src;
          script.onload = () => resolve((window as unknown as Record<string, { ready: Promise<boolean> }>)[name]!.ready);
          script.onerror = () => reject(new Error('the loader did not load'));
          document.head.appendChild(script);
        }),
      { src: loaderUrl, name: SERVICE_GLOBAL },
    );
  };

  expect(await boot(page, fixtureUrl('www', '/blank.html?gclid=before')), 'inactive outside the old domain').toBe(false);
  expect(await cookieNamed(page.context(), CLICK_COOKIE)).toBeUndefined();
  // The spec's own requests reach the service on loopback (fetch decodes the body; the header names the encoding).
  const fetchLoader = (headers: Record<string, string>) => fetch(`${env.serviceBase}/loader.js?site_key=${site.key}`, { headers });
  const first = await fetchLoader({ 'accept-encoding': 'gzip' });
  expect(first.headers.get('content-encoding')).toBe('gzip');
  expect(await first.text()).toContain('"domain":"http://shop.example.org"');
  // A browser may reuse its copy for a minute, then revalidates (in the background for a day, so no page waits).
  expect(first.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=86400');
  const etag = first.headers.get('etag')!;

  await setDomain(env.serviceBase, env.apiKey, site.id, fixtureOrigin('www'));
  // A fresh fetch (what a browser does once its minute is up) carries the new domain under a new ETag.
  const fresh = await fetchLoader({ 'accept-encoding': 'gzip', 'if-none-match': etag });
  expect(fresh.status).toBe(200);
  expect(fresh.headers.get('etag')).not.toBe(etag);
  expect(await fresh.text()).toContain(`"domain":${JSON.stringify(fixtureOrigin('www'))}`);

  // A visitor whose browser holds no copy yet: the loader is active on the new domain.
  const context = await browser.newContext();
  try {
    const visitor = await context.newPage();
    expect(await boot(visitor, fixtureUrl('www', '/blank.html?gclid=after'))).toBe(true);
    expect(decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))!.value)).toContain('"gclid":"after"');
  } finally {
    await context.close();
  }
});
