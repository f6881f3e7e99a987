/**
 * The ways a customer installs the loader: a tag manager's injected script, a page that hides document.currentScript,
 * the queue stub, and both tags at once.
 */
import { CLICK_COOKIE, CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../src/protocol/cookies';
import { SERVICE_GLOBAL } from '../src/protocol/install';
import { expectCollectorRequests, snapshotBody } from './support/collector-traffic';
import { fixtureUrl } from './support/env';
import { recordedRequests } from './support/fixture-server';
import { captureIntent, cookieNamed, expect, expectNoNewGlobals, expectSnapshotStored, loaderReady, signUpWithClick, test } from './support/test';


test('a script element created by a tag manager with the key in its src and no data attributes works', async ({
  page,
  context,
  traffic,
  env,
  blankGlobals,
}) => {
  await page.goto(fixtureUrl('www', '/tag-manager.html?gclid=tm'));
  await loaderReady(page, traffic);
  const tag = page.locator('script[src*="/loader.js"]');
  await expect(tag).toHaveCount(1);
  expect(await tag.evaluate((el) => el.getAttributeNames().filter((n) => n.startsWith('data-')))).toEqual([]);
  await expectNoNewGlobals(page, blankGlobals);

  const token = await signUpWithClick(page, context, traffic, env, 'tm');
  expect((await recordedRequests(env.fixtureControl)).some((r) => r.cookie.includes(`${CORRELATION_COOKIE}=${token}`))).toBe(true);
});

test("a page that hides document.currentScript: the install snippet finds its own tag by its key, not another site's", async ({
  page,
  context,
  traffic,
  env,
  blankGlobals,
}) => {
  await page.goto(fixtureUrl('www', '/hidden-current-script.html?gclid=hidden'));
  await loaderReady(page, traffic);
  expect(await page.evaluate(() => document.currentScript), 'the page hides it').toBeNull();
  expect(await page.evaluate((name) => (window as unknown as Record<string, { ready: Promise<boolean> }>)[name]!.ready, SERVICE_GLOBAL)).toBe(true);
  // Active without consent asked for: the options are its own tag's, not those of the other site's tag before it.
  expect(decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))!.value)).toContain('"gclid":"hidden"');
  await expectNoNewGlobals(page, blankGlobals);

  await signUpWithClick(page, context, traffic, env, 'hidden');
});

test('a call queued by the stub before the loader arrived is replayed once, as an api snapshot', async ({
  page,
  context,
  traffic,
  env,
  blankGlobals,
}) => {
  const calls = await expectCollectorRequests(
    traffic,
    page,
    async () => {
      await page.goto(fixtureUrl('www', '/queue-stub.html'));
      await loaderReady(page, traffic);
    },
    {
      sent: [
        { kind: 'config', times: 1 },
        { kind: 'snapshot', siteKey: env.sites.main.key, snapshot: (s) => s.trigger === 'api', times: 1 },
      ],
      notSent: [{ kind: 'snapshot', snapshot: (s) => s.trigger !== 'api' }],
    },
  );
  const snapshotCall = calls.find((c) => c.kind === 'snapshot')!;
  const replayed = snapshotBody(snapshotCall);
  expect(replayed.correlation_token).toMatch(CORRELATION_TOKEN_PATTERN);
  expect(replayed.touch).toBeNull();
  await expectSnapshotStored(env, snapshotCall);
  expect((await cookieNamed(context, CORRELATION_COOKIE))?.value).toBe(replayed.correlation_token);

  // After load the API is the loader's own: it answers with the same, still valid token.
  expect(await captureIntent(page)).toBe(replayed.correlation_token);
  await expectNoNewGlobals(page, blankGlobals);
});

test('a loader pasted and also injected by a tag manager boots once: at most one config request, one snapshot per intent', async ({
  page,
  traffic,
  env,
  blankGlobals,
}) => {
  await expectCollectorRequests(
    traffic,
    page,
    async () => {
      await page.goto(fixtureUrl('www', '/double-load.html'));
      await loaderReady(page, traffic);
    },
    // Both copies arrive (two script fetches), yet only one of them boots. The tag manager's copy carries the config
    // inside (no config request) and the pasted one fetches it: whichever runs first boots, so 0 or 1 config requests.
    { sent: [{ kind: 'loader', times: 2 }], notSent: [{ kind: 'snapshot' }] },
  );
  expect(traffic.of('config').length).toBeLessThanOrEqual(1);
  await expectNoNewGlobals(page, blankGlobals);

  const fromApi = await expectCollectorRequests(traffic, page, () => captureIntent(page), {
    sent: [{ kind: 'snapshot', siteKey: env.sites.main.key, times: 1 }],
  });
  const token = snapshotBody(fromApi.find((c) => c.kind === 'snapshot')!).correlation_token;

  await expectCollectorRequests(
    traffic,
    page,
    () => Promise.all([page.waitForURL(/\/signup$/), page.getByRole('button', { name: 'Create account' }).click()]),
    { sent: [{ kind: 'snapshot', snapshot: (s) => s.trigger === 'form_submit' && s.correlation_token === token, times: 1 }], notSent: [{ kind: 'config' }] },
  );
  expect(traffic.of('snapshot')).toHaveLength(2);
});
