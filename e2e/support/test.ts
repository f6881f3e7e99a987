/**
 * The browser tests' `test`: Playwright's, plus the real service's traffic recorder, a guard that no page error
 * escapes into any page, and helpers that read the page's cookies, storage and globals.
 */
import { test as base, expect, type BrowserContext, type Page } from '@playwright/test';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { SERVICE_GLOBAL } from '../../src/protocol/install';
import { CollectorTraffic, expectCollectorRequests, responseStatus, snapshotBody, type CollectorCall } from './collector-traffic';
import { storedSnapshot } from './fixture-server';
import { e2eEnv, fixtureUrl, type E2EEnv } from './env';

interface TestFixtures {
  env: E2EEnv;
  /**
   * Whether the test's pages reach the service over https (`env.https.serviceOrigin`, behind the TLS proxy), so
   * `traffic` records that origin. Set with `test.use({ overHttps: true, ignoreHTTPSErrors: true })`.
   */
  overHttps: boolean;
  traffic: CollectorTraffic;
  /** Uncaught errors of any page of the test's context; the test fails if any occurred. */
  pageErrors: string[];
}

interface WorkerFixtures {
  /** Own property names of `window` on a blank fixture page without the loader. */
  blankGlobals: string[];
}

export const test = base.extend<TestFixtures, WorkerFixtures>({
  env: async ({}, use) => {
    await use(e2eEnv());
  },
  overHttps: [false, { option: true }],
  traffic: async ({ context, env, overHttps }, use) => {
    await use(await CollectorTraffic.attach(context, overHttps ? env.https.serviceOrigin : env.serviceOrigin));
  },
  pageErrors: [
    async ({ context }, use) => {
      const errors: string[] = [];
      context.on('weberror', (webError) => errors.push(String(webError.error())));
      await use(errors);
      expect(errors, 'uncaught errors in the page').toEqual([]);
    },
    { auto: true },
  ],
  blankGlobals: [
    async ({ browser }, use) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(fixtureUrl('www', '/blank.html'));
      const names = await page.evaluate(() => Object.getOwnPropertyNames(window));
      await context.close();
      await use(names);
    },
    { scope: 'worker' },
  ],
});

export { expect };

/** The loader's own cookies (cnv_*) in a context. */
export async function loaderCookies(context: BrowserContext) {
  return (await context.cookies()).filter((c) => c.name.startsWith('cnv_'));
}

/** One loader cookie by name, or undefined. */
export async function cookieNamed(context: BrowserContext, name: typeof CLICK_COOKIE | typeof CORRELATION_COOKIE) {
  return (await context.cookies()).find((c) => c.name === name);
}

/** How many entries the page's origin holds in sessionStorage and localStorage. */
export async function storageEntries(page: Page): Promise<{ session: number; local: number }> {
  return page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length }));
}

/**
 * Waits until the loader has run and settled its boot: the page's load event (async scripts delay it), the
 * `window.__service` API present, its `ready` promise (the loader's decision) when it offers one, and no collector
 * request still in flight.
 */
export async function loaderReady(page: Page, traffic: CollectorTraffic): Promise<void> {
  await page.waitForLoadState('load');
  await page
    .waitForFunction((name) => typeof (window as unknown as Record<string, unknown>)[name] === 'object', SERVICE_GLOBAL, { timeout: 10_000 })
    .catch((error: Error) => {
      const seen = traffic.calls.map((c) => `${c.method} ${c.url.href} ${c.request.failure()?.errorText ?? ''}`).join('\n  ');
      throw new Error(`window.__service never appeared on ${page.url()}; service requests so far:\n  ${seen || '(none)'}\n${error.message}`);
    });
  await page.evaluate(async (name) => {
    const ready = (window as unknown as Record<string, { ready?: unknown }>)[name]!.ready;
    if (ready && typeof (ready as Promise<unknown>).then === 'function') await ready;
  }, SERVICE_GLOBAL);
  await traffic.settle(page);
}

/** Calls `window.__service.captureSaasSignupIntent()` in the page and returns what its promise resolves to. */
export async function captureIntent(page: Page): Promise<string | null> {
  return page.evaluate(async (name) => {
    const api = (window as unknown as Record<string, { captureSaasSignupIntent(): Promise<string | null> }>)[name]!;
    return api.captureSaasSignupIntent();
  }, SERVICE_GLOBAL);
}

/** Calls `window.__service.consent(granted)` in the page. */
export async function giveConsent(page: Page, granted: boolean): Promise<void> {
  await page.evaluate(
    ([name, value]) => {
      (window as unknown as Record<string, { consent(granted: boolean): unknown }>)[name as string]!.consent(value as boolean);
    },
    [SERVICE_GLOBAL, granted] as const,
  );
}

/**
 * Asserts that the page's `window` has no own property beyond a blank page's, `__service`, and the globals the
 * fixture page itself defines (`pageGlobals`, e.g. dataLayer).
 */
export async function expectNoNewGlobals(page: Page, blankGlobals: string[], pageGlobals: string[] = []): Promise<void> {
  const names = await page.evaluate(() => Object.getOwnPropertyNames(window));
  const known = new Set([...blankGlobals, ...pageGlobals]);
  // Playwright's own tracing adds __playwright_* bindings; they are the harness's, not the loader's.
  expect(names.filter((n) => !known.has(n) && !n.startsWith('__playwright')).sort(), 'globals beyond a blank page').toEqual([SERVICE_GLOBAL]);
}

/**
 * Asserts the real service accepted a snapshot call: its answer was 204 (when the browser saw the answer: a beacon
 * from a page that navigates away often has none to report) and the snapshot is stored under its token, with the
 * click ids it carried. Returns the stored row (as JSON).
 */
export async function expectSnapshotStored(env: E2EEnv, call: CollectorCall): Promise<Record<string, unknown>> {
  const sent = snapshotBody(call);
  const status = await responseStatus(call);
  if (status !== null) expect(status, 'the collector answered the snapshot with').toBe(204);
  const site = Object.values(env.sites).find((s) => s?.key === call.siteKey);
  if (!site) throw new Error(`snapshot sent for an unknown site key ${call.siteKey}`);
  let stored: Record<string, unknown> | null = null;
  await expect
    .poll(async () => (stored = await storedSnapshot(env.fixtureControl, site.id, sent.correlation_token)) !== null, {
      message: 'the snapshot stored by the real service',
    })
    .toBe(true);
  const storedClickIds = ((stored!.touch as { click_ids?: Record<string, string> } | null)?.click_ids ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(sent.touch?.click_ids ?? {})) expect(storedClickIds[key], `stored ${key}`).toBe(value);
  return stored!;
}

/**
 * Presses the fixture's "Create account": one form_submit snapshot of the main site carrying the landing's gclid,
 * stored, its token in the correlation cookie. Returns the token.
 */
export async function signUpWithClick(page: Page, context: BrowserContext, traffic: CollectorTraffic, env: E2EEnv, gclid: string): Promise<string> {
  const calls = await expectCollectorRequests(
    traffic,
    page,
    () => Promise.all([page.waitForURL(/\/signup$/), page.getByRole('button', { name: 'Create account' }).click()]),
    { sent: [{ kind: 'snapshot', siteKey: env.sites.main.key, times: 1 }] },
  );
  const snapshotCall = calls.find((c) => c.kind === 'snapshot')!;
  const snapshot = snapshotBody(snapshotCall);
  expect(snapshot).toMatchObject({ trigger: 'form_submit', touch: { click_ids: { gclid } } });
  await expectSnapshotStored(env, snapshotCall);
  const token = (await cookieNamed(context, CORRELATION_COOKIE))?.value;
  expect(token).toBe(snapshot.correlation_token);
  return token!;
}
