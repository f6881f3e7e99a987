/** The loader is active only on the site's domain and its subdomains: elsewhere it writes nothing and sends nothing. */
import type { Page } from '@playwright/test';
import { CORRELATION_TOKEN_PATTERN } from '../src/protocol/cookies';
import { expectCollectorRequests, type CollectorTraffic } from './support/collector-traffic';
import { fixtureUrl, type E2EEnv, type FixtureHost } from './support/env';
import { captureIntent, expect, expectNoNewGlobals, expectSnapshotStored, loaderCookies, loaderReady, storageEntries, test } from './support/test';

/** Asserts the page's loader is inactive: the API resolves null, a form submit sends nothing, no cookie or storage. */
async function expectInactive(page: Page, traffic: CollectorTraffic, siteKey: string): Promise<void> {
  await loaderReady(page, traffic);
  await expectCollectorRequests(
    traffic,
    page,
    async () => {
      expect(await captureIntent(page), 'captureSaasSignupIntent() on an inactive page').toBeNull();
      await Promise.all([page.waitForURL(/\/signup$/), page.getByRole('button', { name: 'Create account' }).click()]);
    },
    { notSent: [{ kind: 'snapshot' }] },
  );
  // The backend's answer page is on the same origin: its storage is the storage the loader would have used.
  expect(await loaderCookies(page.context()), 'cookies written by an inactive loader').toEqual([]);
  expect(await storageEntries(page), 'storage written by an inactive loader').toEqual({ session: 0, local: 0 });
  expect(traffic.of('config').filter((c) => c.siteKey === siteKey), 'the loader asked for its config').not.toHaveLength(0);
}

/** The control: the same key on an accepted origin is active, so the inactive case above is the origin check's doing. */
async function expectActive(page: Page, traffic: CollectorTraffic, env: E2EEnv, host: FixtureHost, site: string): Promise<void> {
  await page.goto(fixtureUrl(host, `/signup.html?site=${site}`));
  await loaderReady(page, traffic);
  const calls = await expectCollectorRequests(traffic, page, async () => {
    expect(await captureIntent(page)).toMatch(CORRELATION_TOKEN_PATTERN);
  }, { sent: [{ kind: 'snapshot', times: 1 }] });
  await expectSnapshotStored(env, calls.find((c) => c.kind === 'snapshot')!);
}

test('a page on a foreign origin that loads the loader with example.com\'s key writes and sends nothing', async ({
  page,
  traffic,
  env,
  blankGlobals,
}) => {
  await page.goto(fixtureUrl('evil', '/signup.html?site=main&gclid=stolen'));
  await loaderReady(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);
  await expectInactive(page, traffic, env.sites.main.key);
  await expectActive(page, traffic, env, 'www', 'main');
});

test('a site whose domain is null accepts no page at all', async ({ page, traffic, env, blankGlobals }) => {
  await page.goto(fixtureUrl('www', '/signup.html?site=nullDomain&gclid=abc'));
  await loaderReady(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);
  await expectInactive(page, traffic, env.sites.nullDomain.key);
  await expectActive(page, traffic, env, 'www', 'main');
});

test('a site on www.example.com does not accept its sibling app.example.com', async ({ page, traffic, env, blankGlobals }) => {
  await page.goto(fixtureUrl('app', '/signup.html?site=www&gclid=abc'));
  await loaderReady(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);
  await expectInactive(page, traffic, env.sites.www.key);
  await expectActive(page, traffic, env, 'www', 'www');
});
