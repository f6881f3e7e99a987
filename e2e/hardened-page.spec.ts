/**
 * A hardened host page (SES lockdown(), a security-minded framework): the built-in prototypes are frozen before the
 * loader arrives, so assigning an own `push` or `pushState` to an array or to history fails (the "override mistake":
 * the inherited property is read-only, and the loader's strict-mode bundle throws). The loader must work there too.
 */
import { CLICK_COOKIE, CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../src/protocol/cookies';
import { expectCollectorRequests, snapshotBody } from './support/collector-traffic';
import { fixtureUrl } from './support/env';
import { captureIntent, cookieNamed, expect, expectSnapshotStored, loaderReady, signUpWithClick, test } from './support/test';

/** Freezes the prototypes a lockdown freezes, before any page script; a dataLayer as Google's tag creates it. */
const harden = () => {
  (window as unknown as { dataLayer: unknown[] }).dataLayer = [];
  for (const proto of [Object.prototype, Array.prototype, Function.prototype, History.prototype]) Object.freeze(proto);
};

test('on a page with frozen prototypes and a dataLayer the landing click and the click of a route change are kept and a signup sends its snapshot', async ({
  page,
  context,
  traffic,
  env,
}) => {
  await page.addInitScript(harden);
  await page.goto(fixtureUrl('www', '/signup.html?gclid=hardened'));
  expect(await page.evaluate(() => Object.isFrozen(Array.prototype)), 'the lockdown is in effect').toBe(true);
  await loaderReady(page, traffic);
  expect(JSON.parse(decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))!.value))).toMatchObject({
    click_ids: { gclid: 'hardened' },
  });
  // A single-page app's route change to a newer ad click (pushState, inherited from the frozen History.prototype).
  await page.evaluate(() => history.pushState({}, '', '/signup.html?gclid=routed'));
  expect(JSON.parse(decodeURIComponent((await cookieNamed(context, CLICK_COOKIE))!.value))).toMatchObject({
    click_ids: { gclid: 'routed' },
  });
  await signUpWithClick(page, context, traffic, env, 'routed');
});

test('on a page with frozen prototypes a call queued by the stub is replayed, and consent mode is still followed', async ({
  page,
  context,
  traffic,
  env,
}) => {
  await page.addInitScript(harden);
  const calls = await expectCollectorRequests(
    traffic,
    page,
    async () => {
      await page.goto(fixtureUrl('www', '/queue-stub.html'));
      await loaderReady(page, traffic);
    },
    { sent: [{ kind: 'snapshot', siteKey: env.sites.main.key, snapshot: (s) => s.trigger === 'api', times: 1 }] },
  );
  const replayed = snapshotBody(calls.find((c) => c.kind === 'snapshot')!);
  expect(replayed.correlation_token).toMatch(CORRELATION_TOKEN_PATTERN);
  await expectSnapshotStored(env, calls.find((c) => c.kind === 'snapshot')!);

  // The visitor then refuses ad storage in the banner: the loader stops and forgets, as on any page.
  await page.evaluate(() => {
    (window as unknown as { dataLayer: unknown[] }).dataLayer.push(['consent', 'update', { ad_storage: 'denied' }]);
  });
  expect(await cookieNamed(context, CORRELATION_COOKIE)).toBeUndefined();
  expect(await captureIntent(page)).toBeNull();
});
