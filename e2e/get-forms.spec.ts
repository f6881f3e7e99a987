/**
 * Forms sent with GET: the browser replaces the action's query with the form's fields, so what the loader carries to
 * the next page (the linker's `_cnv`, URL passthrough's click ids) must go in as fields of the form.
 */
import { CLICK_COOKIE } from '../src/protocol/cookies';
import { expectCollectorRequests, snapshotBody } from './support/collector-traffic';
import { fixtureOrigin, fixtureUrl } from './support/env';
import { captureIntent, cookieNamed, expect, giveConsent, loaderReady, test } from './support/test';
import { QUICK_POLL } from './support/poll';

test('a GET form to the site\'s other registrable domain carries the click in _cnv, and the form\'s own fields go too', async ({
  page,
  traffic,
  env,
}) => {
  const port = env.fixturePort;
  const landing = `http://www.example.com:${port}/linker-get-form.html?site=main&gclid=GET-link`;
  await page.goto(landing);
  await loaderReady(page, traffic);
  await Promise.all([page.waitForURL(/app\.example\.net/), page.getByRole('button', { name: 'Start your trial' }).click()]);
  await loaderReady(page, traffic);
  expect(page.url(), 'the form\'s fields arrive, _cnv is removed from the address bar').toBe(
    `http://app.example.net:${port}/linker-app.html?site=linkerApp&email=ada%40example.com`,
  );
  const appCookie = await page.context().cookies(`http://app.example.net:${port}/`);
  expect(decodeURIComponent(appCookie.find((c) => c.name === CLICK_COOKIE)?.value ?? '')).toContain('GET-link');

  const calls = await expectCollectorRequests(traffic, page, () => captureIntent(page), {
    sent: [{ kind: 'snapshot', siteKey: env.sites.linkerApp.key, times: 1 }],
  });
  expect(snapshotBody(calls.find((c) => c.kind === 'snapshot')!).touch).toMatchObject({
    click_ids: { gclid: 'GET-link' },
    landing_page_url: landing.split('?')[0],
  });
});

test('before consent, a same-site GET form carries the landing click (a field of the form\'s own wins), and nothing is written', async ({
  page,
  traffic,
}) => {
  await page.goto(fixtureUrl('www', '/passthrough-get-form.html?gclid=GET-pass&utm_source=google&utm_medium=cpc'));
  await loaderReady(page, traffic);
  await Promise.all([page.waitForURL(/passthrough-pricing/), page.getByRole('button', { name: 'See pricing' }).click()]);
  await loaderReady(page, traffic);
  const query = Object.fromEntries(new URL(page.url()).searchParams);
  expect(page.url().startsWith(`${fixtureOrigin('app')}/passthrough-pricing.html?`)).toBe(true);
  expect(query).toEqual({ site: 'main', utm_source: 'plan-picker', seats: '5', gclid: 'GET-pass', utm_medium: 'cpc' });
  expect(await page.context().cookies(), 'nothing written before consent').toEqual([]);

  await giveConsent(page, true);
  await expect.poll(async () => decodeURIComponent((await cookieNamed(page.context(), CLICK_COOKIE))?.value ?? ''), QUICK_POLL).toContain('GET-pass');
});

test('before consent, a page whose legacy script added to Object.prototype gets only the click on its links', async ({ page, traffic }) => {
  await page.addInitScript(() => {
    (Object.prototype as Record<string, unknown>).legacyHelper = 'polluted';
  });
  await page.goto(fixtureUrl('www', '/passthrough-landing.html?gclid=P-proto&utm_source=google'));
  await loaderReady(page, traffic);
  await Promise.all([page.waitForURL(/passthrough-pricing/), page.getByRole('link', { name: 'Pricing' }).click()]);
  expect(page.url()).toBe(`${fixtureOrigin('app')}/passthrough-pricing.html?site=main&gclid=P-proto&utm_source=google`);
});
