/** The accessibility check of a page: axe-core's WCAG 2.x A/AA rules in real Chromium, no serious or critical violation. */
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';

/** Runs axe on the page as it is now and fails with each serious or critical violation, its rule and the elements. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join('\n  ')}`);
  expect(serious, `axe: serious or critical violations on ${what} (${page.url()})`).toEqual([]);
}

/**
 * The page checked with axe and shot full-page at a desktop (1280) and a phone (390) width, as `<prefix>-<name>-desktop.png`
 * and `-phone.png` in `dir`; the viewport is left at the desktop width.
 */
export async function checkAndShoot(page: Page, dir: string, prefix: string, name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 900 });
  await expectAccessible(page, name);
  await page.screenshot({ path: join(dir, `${prefix}-${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await expectAccessible(page, `${name} (phone)`);
  await page.screenshot({ path: join(dir, `${prefix}-${name}-phone.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}
