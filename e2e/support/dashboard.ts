/**
 * What the dashboard specs share: a real service of their own (seeded store) with the strict fake Meta behind it, a
 * fresh sign-in link, signing in with it (its page's button), opening a page from the navigation, and the axe check with screenshots at a desktop
 * and a phone width, written to test-results/screenshots/ (docs/dashboard.md shows copies in docs/screenshots/).
 */
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './test';
import { checkAndShoot } from './axe';
import { startRealService, type RunningService } from './real-service';
import { startFakeMeta, type MetaPlan } from '../../src/demo/fakes/meta';
import type { FakeServer } from '../../src/demo/fakes/fake-server';
import { issueSignInLink } from '../../src/server/dashboard';
import { LOCAL_RECEIVERS } from '../../test/server/support/receiver';

// Written under test-results/ (ignored); docs/screenshots/ holds the copies docs/dashboard.md shows, updated by hand from these.
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');

export interface DashboardService {
  svc: RunningService;
  meta: FakeServer<MetaPlan>;
  /** The origin pages use for the service: http://cnv.test:<port>. */
  origin: string;
}

/**
 * One service with the fake Meta for the spec file that calls this at its top level: started before its tests, closed
 * after them. The handle's properties are set once it has started (inside the tests and their helpers).
 */
export function useDashboardService(): DashboardService {
  const handle = {} as DashboardService;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    handle.meta = await startFakeMeta();
    // The notifications test's receiver listens on this machine.
    handle.svc = await startRealService('cnv.test', { CNV_META_GRAPH_API_BASE: handle.meta.url, CNV_SECRET_KEY: '5'.repeat(64), ...LOCAL_RECEIVERS });
    handle.origin = `http://cnv.test:${handle.svc.port}`;
  });
  test.afterAll(async () => {
    await handle.svc?.close();
    await handle.meta?.close();
  });
  return handle;
}

/** Full-page screenshots at a desktop and a phone width, after the accessibility check of the page at both. */
export async function shoot(page: Page, name: string): Promise<void> {
  await checkAndShoot(page, SHOTS, 'dashboard', name);
}

/** A fresh sign-in link of the first account (as `cnv dashboard` prints it). */
export async function freshLink(svc: RunningService, accountId?: string, at?: Date): Promise<string> {
  const [account] = await svc.db.query<{ id: string }>('select id from accounts order by created_at limit 1');
  return (await issueSignInLink(svc.db, svc.settings!, accountId ?? account!.id, at)).url;
}

/**
 * Follows a sign-in link as a person does: the link opens a page saying whose dashboard it opens (opening it spends
 * nothing), and its "Sign in" button signs in.
 */
export async function followSignInLink(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: /^Sign in/ }).click();
  await expect(page.getByRole('navigation', { name: 'Dashboard' })).toBeVisible();
}

export async function signIn(page: Page, svc: RunningService): Promise<void> {
  await followSignInLink(page, await freshLink(svc));
}

/** Signs in and opens a page from the navigation. */
export async function open(page: Page, svc: RunningService, name: string): Promise<void> {
  await signIn(page, svc);
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
}
