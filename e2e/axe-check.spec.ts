/**
 * The accessibility check the page specs rely on (support/axe.ts) finds what it should: a page with serious violations
 * fails with each rule and element named, inside a frame too; a clean page passes; and a second check of the same
 * document (after a resize, as checkAndShoot does) still runs.
 */
import { expect, test } from './support/test';
import { expectAccessible } from './support/axe';

const CLEAN = '<!doctype html><html lang="en"><head><title>Clean</title></head><body><main><h1>Clean</h1><p>Readable text.</p></main></body></html>';
const BROKEN =
  '<!doctype html><html lang="en"><head><title>Broken</title></head><body><main><h1>Broken</h1>' +
  '<img id="no-alt" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><p id="faint" style="color:#ddd;background:#fff">faint</p></main></body></html>';

/** Shows `html` at an http origin of its own (axe's frames answer only their own origin, which about:blank has not). */
async function show(page: import('@playwright/test').Page, html: string): Promise<void> {
  await page.route('http://axe-check.test/', (route) => route.fulfill({ contentType: 'text/html', body: html }));
  await page.goto('http://axe-check.test/');
  await page.unroute('http://axe-check.test/');
}

test('a clean page passes, and serious violations fail with their rule and element, inside a frame too', async ({ page }) => {
  await show(page, CLEAN);
  await expectAccessible(page, 'clean page');
  await page.setViewportSize({ width: 390, height: 844 });
  await expectAccessible(page, 'clean page (phone)');

  await show(page, BROKEN);
  const failure = await expectAccessible(page, 'broken page').then(() => null, (error: Error) => error.message);
  expect(failure).toContain('image-alt (critical)');
  expect(failure).toContain('#no-alt');
  expect(failure).toContain('color-contrast (serious)');
  expect(failure).toContain('#faint');

  await show(page, `<!doctype html><html lang="en"><head><title>Framed</title></head><body><main><h1>Framed</h1><iframe title="inner" srcdoc='<img id="framed-no-alt" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'></iframe></main></body></html>`);
  await expect(page.frameLocator('iframe').locator('#framed-no-alt')).toBeAttached();
  const framed = await expectAccessible(page, 'framed page').then(() => null, (error: Error) => error.message);
  expect(framed).toContain('image-alt (critical)');
  expect(framed).toContain('#framed-no-alt');
});
