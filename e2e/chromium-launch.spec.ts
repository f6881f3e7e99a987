/**
 * The browser the tests launch (support/chromium.ts, playwright.config.ts): without the address bar's WebUI popups that
 * a full Chromium preloads for every window (they cost more CPU than the tested pages), and with every feature
 * Playwright disables still disabled, since the launch repeats Playwright's `--disable-features` list (Chromium keeps
 * only the last one).
 */
import { playwrightDisabledFeatures, UNUSED_BROWSER_UI_FEATURES } from './support/chromium';
import { expect, test } from './support/test';

test("Playwright's disabled features are read from the installed Playwright", () => {
  const features = playwrightDisabledFeatures();
  expect(features, "Playwright's --disable-features list, read from playwright-core (see support/chromium.ts)").not.toBeNull();
  expect(features).toEqual(expect.arrayContaining(['HttpsUpgrades', 'PaintHolding', 'ThirdPartyStoragePartitioning']));
});

test('a window preloads no browser UI page, and only the tested page has a target', async ({ browser, page }) => {
  await page.goto('data:text/html,<title>t</title>');
  const session = await browser.newBrowserCDPSession();
  const { targetInfos } = await session.send('Target.getTargets', { filter: [{}] });
  await session.detach();
  expect(targetInfos.filter((t) => t.type === 'browser_ui' || t.url.startsWith('chrome://')).map((t) => t.url), `no preloaded ${UNUSED_BROWSER_UI_FEATURES.join(', ')}`).toEqual([]);
});

test("an http:// navigation stays http (Playwright's HttpsUpgrades switch still off)", async ({ page }) => {
  const requested: string[] = [];
  await page.context().route(/^https?:\/\/www\.example\.org\//, (route) => {
    requested.push(route.request().url());
    return route.fulfill({ contentType: 'text/html', body: '<title>plain http</title>' });
  });
  await page.goto('http://www.example.org/');
  expect(page.url()).toBe('http://www.example.org/');
  expect(requested).toEqual(['http://www.example.org/']);
});
