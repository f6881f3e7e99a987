/** The accessibility check of a page: axe-core's WCAG 2.x A/AA rules in real Chromium, no serious or critical violation. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect, type Page } from '@playwright/test';

/** axe-core's browser build, read once per worker. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core in the page itself (and in every frame, so a frame's content is checked too), asking for violations
 * only. `@axe-core/playwright`, which this replaces, opened a blank page for every check to assemble its results and
 * sent every passing rule's nodes back over the protocol: 1.4 to 1.9 s a check where this takes 0.1 to 0.3 s (measured
 * side by side on the dashboard's pages, with the same violations found), and the browser tests run about ninety.
 * The script stays in the page between checks of one document (a resize keeps it).
 */
async function violations(page: Page): Promise<Violation[]> {
  for (const frame of page.frames()) {
    if (!(await frame.evaluate('typeof window.axe === "object"'))) await frame.evaluate(AXE_SOURCE);
  }
  return page.evaluate(async (tags) => {
    type AxeResults = { violations: Array<{ id: string; impact?: string | null; help: string; nodes: Array<{ target: unknown[] }> }> };
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe;
    const results = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return results.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  }, TAGS);
}

/** Runs axe on the page as it is now and fails with each serious or critical violation, its rule and the elements. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const serious = (await violations(page))
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.targets.slice(0, 5).join('\n  ')}`);
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
