import { defineConfig } from '@playwright/test';
import { chromiumExecutable, playwrightLaunchArgs } from './e2e/support/chromium';

const executablePath = chromiumExecutable();

/**
 * Specs that start their own real service (startRealService, startJourneyService): independent of the shared one and of
 * each other (fresh data directory, free ports), so two of them may run at once; and specs that need no service at all
 * (axe-check.spec.ts, chromium-launch.spec.ts), which keep the shared service's lane, the longest, for the specs that
 * need it.
 */
const OWN_SERVICE_SPECS = [
  '**/api-reference.spec.ts',
  '**/axe-check.spec.ts',
  '**/chromium-launch.spec.ts',
  '**/dashboard.spec.ts',
  '**/dashboard-a11y.spec.ts',
  '**/dashboard-delivery.spec.ts',
  '**/demo-revenue.spec.ts',
  '**/journey.spec.ts',
  '**/new-user.spec.ts',
  '**/personal-data.spec.ts',
  '**/reddit-connect.spec.ts',
];

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './e2e/support/global-setup.ts',
  fullyParallel: false,
  // Three lanes, one spec file at a time in each: two take the specs that start a service of their own (they share
  // nothing with the others; dashboard.spec.ts alone keeps one of them busy most of the run) beside one for the specs
  // that share the global setup's service, sites and fixture site (those stay one at a time, as their expectations
  // about that shared state assume). With two lanes the browser step used about 0.7 of a core of two (the browsers
  // mostly wait on pages, polling and the services' workers). Measured side by side on a busy machine (load 4-9), three
  // lanes took 254 s where two took 258 s: the gain needs the idle core a quiet machine has.
  workers: 3,
  projects: [
    { name: 'own service', testMatch: OWN_SERVICE_SPECS, workers: 2 },
    { name: 'shared service', testIgnore: OWN_SERVICE_SPECS, workers: 1 },
  ],
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { ...(executablePath ? { executablePath } : {}), args: playwrightLaunchArgs() },
    // A failed test keeps its trace (actions, DOM snapshots, network). Without the screencast: recording its frames
    // through every test cost 12 % of the browser step on this 2-core machine (153 s against 135 s for four specs, side
    // by side), a price paid by every passing test for a film nobody watches; the snapshots show each step's page.
    trace: { mode: 'retain-on-failure', screenshots: false },
  },
});
