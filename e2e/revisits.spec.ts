/**
 * A tab that is loaded again (reloaded, gone back to, restored with the session after a restart) must not steal the
 * credit of a newer ad click: in real Chromium against the real service, two tabs of one browser (one cookie store),
 * tab A's click, then tab B's, then tab A again; the signup's snapshot, the stored snapshot and the upload to the fake
 * Google Ads carry the click of tab B. And the other side: the latest click's tab reloaded keeps it, a reload with
 * nothing stored takes its click.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { CLICK_COOKIE } from '../src/protocol/cookies';
import { chromiumExecutable, playwrightLaunchArgs } from './support/chromium';
import { CollectorTraffic } from './support/collector-traffic';
import { fixtureUrl } from './support/env';
import { captureIntent, cookieNamed, expect, loaderReady, signUpWithClick, test } from './support/test';
import { reportAndAwaitUpload } from './support/upload';

/** The stored touch (cnv_click), parsed. */
async function storedTouch(page: Page): Promise<{ click_ids: Record<string, string>; captured_at: string } | undefined> {
  const cookie = await cookieNamed(page.context(), CLICK_COOKIE);
  return cookie && JSON.parse(decodeURIComponent(cookie.value));
}

/** How the browser says it came to the document shown: its navigation entry's type. */
async function arrival(page: Page): Promise<string> {
  return page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).type);
}

/** Opens `query` on the landing page in `page` and waits for the loader. */
async function land(page: Page, traffic: CollectorTraffic, query: string): Promise<void> {
  await page.goto(fixtureUrl('www', `/landing.html?${query}`));
  await loaderReady(page, traffic);
}

test('tab A (gclid A), tab B (gclid B), tab A reloaded: the signup in tab A is reported with B', async ({ page, traffic, env }) => {
  await land(page, traffic, 'gclid=R1-A');
  const tabB = await page.context().newPage();
  await land(tabB, traffic, 'gclid=R1-B');
  const b = await storedTouch(page);
  expect(b!.click_ids).toEqual({ gclid: 'R1-B' });

  await page.bringToFront();
  await page.reload();
  await loaderReady(page, traffic);
  expect(await arrival(page)).toBe('reload');
  expect(await storedTouch(page), 'the newer click stays stored, as it was').toEqual(b);

  await page.goto(fixtureUrl('www', '/signup.html'));
  await loaderReady(page, traffic);
  const token = await signUpWithClick(page, page.context(), traffic, env, 'R1-B');
  expect(await reportAndAwaitUpload(env, 'main', token), 'the click id uploaded to Google Ads').toMatchObject({ clickIdKind: 'gclid', clickId: 'R1-B' });
});

test('across platforms: an fbclid tab reloaded after a newer gclid keeps the gclid', async ({ page, traffic }) => {
  await land(page, traffic, 'fbclid=R2-F');
  const tabB = await page.context().newPage();
  await land(tabB, traffic, 'gclid=R2-G');
  await page.reload();
  await loaderReady(page, traffic);
  expect((await storedTouch(page))!.click_ids).toEqual({ gclid: 'R2-G' });
  const token = await captureIntent(page);
  const { body } = await traffic.waitForSnapshot(0, (b) => b.correlation_token === token);
  expect(body.touch!.click_ids).toEqual({ gclid: 'R2-G' });
});

test('tab A gone back to (a back/forward load that runs the page again) keeps the newer click of tab B', async ({ page, traffic, env }) => {
  // An unload listener keeps Chromium from putting the page in the back/forward cache: going back loads it again.
  await page.addInitScript(() => addEventListener('unload', () => {}));
  await land(page, traffic, 'gclid=R3-A');
  await page.goto(fixtureUrl('www', '/pricing.html'));
  await loaderReady(page, traffic);
  const tabB = await page.context().newPage();
  await land(tabB, traffic, 'gclid=R3-B');
  const b = await storedTouch(page);

  await page.goBack();
  await loaderReady(page, traffic);
  expect(page.url()).toContain('gclid=R3-A');
  expect(await arrival(page)).toBe('back_forward');
  expect(await storedTouch(page)).toEqual(b);
  await page.goto(fixtureUrl('www', '/signup.html'));
  await loaderReady(page, traffic);
  await signUpWithClick(page, page.context(), traffic, env, 'R3-B');
});

// A page shown again from the back/forward cache is not tested here: Playwright launches Chromium with
// --disable-back-forward-cache and the fixture pages are sent with Cache-Control: no-store (Chromium's
// Page.backForwardCacheNotUsed names both), so going back always loads the page again, as the test above does. The
// loader does not run again on a page restored from that cache (it has no pageshow listener): the page's touch keeps
// the time it was first read, so a newer click stored since wins (test/loader/revisits.test.ts).

test('the tab of the latest click reloaded keeps it, as stored', async ({ page, traffic }) => {
  await land(page, traffic, 'gclid=R5-A');
  const tabB = await page.context().newPage();
  await land(tabB, traffic, 'gclid=R5-B');
  const b = await storedTouch(tabB);
  await tabB.reload();
  await loaderReady(tabB, traffic);
  expect(await arrival(tabB)).toBe('reload');
  expect(await storedTouch(tabB)).toEqual(b);
});

test('a reload with nothing stored (the cookies cleared since) takes its click', async ({ page, traffic }) => {
  await land(page, traffic, 'gclid=R6-A');
  await page.context().clearCookies();
  await page.reload();
  await loaderReady(page, traffic);
  expect(await arrival(page)).toBe('reload');
  expect((await storedTouch(page))!.click_ids).toEqual({ gclid: 'R6-A' });
});

test('a session the browser restores after a restart: both tabs load again (back_forward), and the newer click stays', async ({ env }) => {
  // A browser of its own with a profile on disk, closed and started again with --restore-last-session: what a visitor's
  // "continue where you left off" does. Both tabs load again; whichever loads last must not take the credit.
  const profile = mkdtempSync(join(tmpdir(), 'cnv-restore-'));
  const launch = (restore: boolean) =>
    chromium.launchPersistentContext(profile, {
      executablePath: chromiumExecutable(),
      args: [...playwrightLaunchArgs(), ...(restore ? ['--restore-last-session'] : [])],
    });
  try {
    let browser = await launch(false);
    let traffic = await CollectorTraffic.attach(browser, env.serviceOrigin);
    const tabA = browser.pages()[0] ?? (await browser.newPage());
    await land(tabA, traffic, 'gclid=R7-A');
    const tabB = await browser.newPage();
    await land(tabB, traffic, 'gclid=R7-B');
    const b = await storedTouch(tabB);
    expect(b!.click_ids).toEqual({ gclid: 'R7-B' });
    await browser.close();

    browser = await launch(true);
    traffic = await CollectorTraffic.attach(browser, env.serviceOrigin);
    const landings = () => browser.pages().filter((p) => p.url().includes('gclid=R7-'));
    await expect.poll(() => landings().length, { message: 'both tabs restored' }).toBe(2);
    for (const tab of landings()) {
      await loaderReady(tab, traffic);
      expect(await arrival(tab), `the navigation type of restored ${tab.url()}`).toBe('back_forward');
    }
    expect(await storedTouch(landings()[0]!), 'the newer click stays stored, as it was').toEqual(b);
    await browser.close();
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
});
