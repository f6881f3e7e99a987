/** An ad click on one page, a signup pages later: the same token reaches the customer's backend and the collector. */
import { CLICK_COOKIE, CLICK_COOKIE_DAYS, CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN, DEFAULT_CORRELATION_TTL_SECONDS } from '../src/protocol/cookies';
import { SNAPSHOT_CONTENT_TYPE } from '../src/protocol/collector';
import { expectCollectorRequests, snapshotBody } from './support/collector-traffic';
import { fixtureOrigin, fixtureUrl } from './support/env';
import { recordedRequests } from './support/fixture-server';
import { captureIntent, cookieNamed, expect, expectNoNewGlobals, expectSnapshotStored, loaderReady, test } from './support/test';
import { QUICK_POLL } from './support/poll';

const nowSeconds = () => Date.now() / 1000;

test('an ad landing followed by a signup on a later page sends one token in the backend cookie and in the snapshot', async ({
  page,
  context,
  traffic,
  env,
  blankGlobals,
}) => {
  const landing = fixtureUrl('www', '/landing.html?gclid=abc&utm_source=google');
  await page.goto(landing);
  await loaderReady(page, traffic);

  // The touch is kept in a first-party cookie on the registrable domain, for 90 days.
  await expect.poll(async () => (await cookieNamed(context, CLICK_COOKIE))?.domain, QUICK_POLL).toBe('.example.com');
  const click = (await cookieNamed(context, CLICK_COOKIE))!;
  expect(click.path).toBe('/');
  expect(click.expires).toBeGreaterThan(nowSeconds() + (CLICK_COOKIE_DAYS - 1) * 86400);
  expect(click.expires).toBeLessThan(nowSeconds() + (CLICK_COOKIE_DAYS + 1) * 86400);
  expect(traffic.of('snapshot'), 'a landing alone is not a signup').toHaveLength(0);
  await expectNoNewGlobals(page, blankGlobals);

  const pricing = fixtureUrl('www', '/pricing.html');
  await page.goto(pricing);
  await loaderReady(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);

  const calls = await expectCollectorRequests(
    traffic,
    page,
    () =>
      Promise.all([
        page.waitForURL(`${fixtureOrigin('app')}/signup`),
        page.getByRole('button', { name: 'Create account' }).click(),
      ]),
    { sent: [{ kind: 'snapshot', siteKey: env.sites.main.key, times: 1 }] },
  );

  const correlation = await cookieNamed(context, CORRELATION_COOKIE);
  expect(correlation, 'the correlation cookie').toBeDefined();
  const token = correlation!.value;
  expect(token).toMatch(CORRELATION_TOKEN_PATTERN);
  expect(correlation).toMatchObject({ domain: '.example.com', path: '/', sameSite: 'Lax', secure: false });
  expect(correlation!.expires).toBeGreaterThan(nowSeconds() + DEFAULT_CORRELATION_TTL_SECONDS - 120);
  expect(correlation!.expires).toBeLessThan(nowSeconds() + DEFAULT_CORRELATION_TTL_SECONDS + 5);

  // The form's own request to the app subdomain already carried the token.
  await expect(page.locator('#received-cookie')).toContainText(`${CORRELATION_COOKIE}=${token}`);
  const atBackend = (await recordedRequests(env.fixtureControl)).filter(
    (r) => r.host === `app.example.com:${env.fixturePort}` && r.path === '/signup' && r.cookie.includes(token),
  );
  expect(atBackend).toHaveLength(1);
  expect(atBackend[0]!.method).toBe('POST');

  const snapshotCall = calls.find((c) => c.kind === 'snapshot')!;
  expect(snapshotCall.method).toBe('POST');
  expect(snapshotCall.request.headers()['content-type']?.toLowerCase()).toBe(SNAPSHOT_CONTENT_TYPE.toLowerCase());
  const snapshot = snapshotBody(snapshotCall);
  expect(snapshot).toMatchObject({
    correlation_token: token,
    trigger: 'form_submit',
    page_url: pricing,
    touch: { click_ids: { gclid: 'abc' }, utm: { utm_source: 'google' }, landing_page_url: landing.split('?')[0] },
  });
  expect(new Date(snapshot.occurred_at).toISOString()).toBe(snapshot.occurred_at);
  await expectSnapshotStored(env, snapshotCall);
});

test('a click in a pushState navigation replaces the touch as a whole, a URL without click params leaves it alone, and going back to the older click keeps the newer', async ({
  page,
  traffic,
  blankGlobals,
}) => {
  await page.goto(fixtureUrl('www', '/landing.html?gclid=first&utm_source=google'));
  await loaderReady(page, traffic);

  const touchAfter = async (navigate: () => Promise<unknown>) => {
    await navigate();
    const since = traffic.calls.length;
    const token = await captureIntent(page);
    expect(token).toMatch(CORRELATION_TOKEN_PATTERN);
    const { body } = await traffic.waitForSnapshot(since);
    expect(body.trigger).toBe('api');
    return body.touch;
  };

  const pushed = await touchAfter(() => page.evaluate(() => history.pushState({}, '', '/landing.html?gclid=second&utm_campaign=spring')));
  expect(pushed?.click_ids).toEqual({ gclid: 'second' });
  expect(pushed?.utm, 'the old campaign UTMs do not mix with the new click').toEqual({ utm_campaign: 'spring' });

  const plain = await touchAfter(() => page.evaluate(() => history.pushState({}, '', '/pricing-in-app')));
  expect(plain?.click_ids).toEqual({ gclid: 'second' });

  // Back twice: popstate returns to the first landing URL. Going back is no new ad click (as a reload or a back/forward
  // page load is not): the newer click stays.
  const back = await touchAfter(async () => {
    await page.evaluate(() => new Promise((resolve) => { addEventListener('popstate', resolve, { once: true }); history.go(-2); }));
  });
  expect(page.url()).toContain('gclid=first');
  expect(back?.click_ids).toEqual({ gclid: 'second' });
  expect(back?.utm).toEqual({ utm_campaign: 'spring' });

  await expectNoNewGlobals(page, blankGlobals);
});
