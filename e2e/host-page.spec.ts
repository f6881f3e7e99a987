/** The loader's promises to the host page: it never throws into it, and it runs under a strict CSP. */
import type { Page } from '@playwright/test';
import { fixtureUrl } from './support/env';
import { expect, expectNoNewGlobals, loaderReady, signUpWithClick, test } from './support/test';

test('a page whose cookie and storage accessors throw gets no page error and a settled API promise', async ({
  page,
  traffic,
  blankGlobals,
}) => {
  // A private mode or a blocked-storage browser: every read or write of cookies and storage throws.
  await page.addInitScript(() => {
    const deny = () => {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    };
    Object.defineProperty(Document.prototype, 'cookie', { get: deny, set: deny, configurable: true });
    Object.defineProperty(window, 'localStorage', { get: deny, configurable: true });
    Object.defineProperty(window, 'sessionStorage', { get: deny, configurable: true });
  });
  await page.goto(fixtureUrl('www', '/signup.html?gclid=private'));
  expect(await page.evaluate(() => { try { return document.cookie; } catch { return 'threw'; } }), 'the emulation is in effect').toBe('threw');
  await loaderReady(page, traffic);

  const settled = await page.evaluate(async () => {
    const api = (window as unknown as { __service: { captureSaasSignupIntent(): Promise<string | null> } }).__service;
    try {
      return { resolved: await api.captureSaasSignupIntent() };
    } catch (error) {
      return { threw: String(error) };
    }
  });
  expect(settled, 'captureSaasSignupIntent() resolves (a token or null), never rejects').toHaveProperty('resolved');
  expect(['string', 'object']).toContain(typeof (settled as { resolved: unknown }).resolved);
  await expectNoNewGlobals(page, blankGlobals);

  // A form submit too: the page's own navigation still happens and nothing escapes (the pageErrors guard checks).
  await Promise.all([page.waitForURL(/\/signup$/), page.getByRole('button', { name: 'Create account' }).click()]);
  await traffic.settle(page);
});

/** Every CSP violation the page reports (its console, and securitypolicyviolation events), recorded from now on. */
async function recordCspViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/content security policy|csp-violation/i.test(message.text())) violations.push(message.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`csp-violation ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return violations;
}

test('under a strict CSP (script-src and connect-src of the service only) the loader works without a violation', async ({
  page,
  context,
  traffic,
  env,
  blankGlobals,
}) => {
  const violations = await recordCspViolations(page);

  const response = await page.goto(fixtureUrl('www', '/csp.html?gclid=csp'));
  expect(response?.headers()['content-security-policy']).toBe(`script-src ${env.serviceOrigin}; connect-src ${env.serviceOrigin}`);
  await loaderReady(page, traffic);
  await expectNoNewGlobals(page, blankGlobals);

  await signUpWithClick(page, context, traffic, env, 'csp');
  expect(violations).toEqual([]);
});

test('under the same strict CSP the core imports its optional linker script (an ES module) and the linker works', async ({
  page,
  traffic,
  env,
}) => {
  const violations = await recordCspViolations(page);
  const imported = page.waitForResponse((response) => response.url() === `${env.serviceOrigin}/loader-links.js`);
  await page.goto(fixtureUrl('www', '/csp-linker.html?site=main&gclid=csp-link'));
  await loaderReady(page, traffic);
  // Fetched as a module: in CORS mode, which the service allows.
  expect((await imported).headers()['access-control-allow-origin']).toBe('*');
  const [request] = await Promise.all([
    page.waitForRequest(/app\.example\.net/),
    page.getByRole('link', { name: 'Start your trial' }).click(),
  ]);
  expect(new URL(request.url()).searchParams.get('_cnv'), 'the linker decorated the link').toBeTruthy();
  expect(violations).toEqual([]);
});

test('a page that forbids inline scripts really blocks them (the CSP fixture is in force)', async ({ page }) => {
  // The control for the test above: the same policy refuses inline code, so "no violation" there means something.
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/content security policy/i.test(message.text())) violations.push(message.text());
  });
  await page.goto(fixtureUrl('www', '/csp.html'));
  await page.evaluate(() => {
    const inline = document.createElement('script');
    inline.textContent = 'document.title = "inline ran"';
    document.head.appendChild(inline);
  });
  await expect.poll(() => violations.length).toBeGreaterThan(0);
  expect(await page.title()).not.toBe('inline ran');
});
