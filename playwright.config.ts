import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumExecutable } from './e2e/support/chromium';

const executablePath = chromiumExecutable();

/**
 * Specs that start their own real service (startRealService, startJourneyService): independent of the shared one. Not
 * every such spec is listed: demo-revenue and reddit-connect run in the shared lane, which keeps the two lanes even.
 */
const OWN_SERVICE_SPECS = ['**/api-reference.spec.ts', '**/dashboard.spec.ts', '**/journey.spec.ts', '**/new-user.spec.ts', '**/personal-data.spec.ts'];

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './e2e/support/global-setup.ts',
  fullyParallel: false,
  // Two lanes, one spec file at a time in each: the specs that start a service of their own (they share nothing with
  // the others) beside the specs that share the global setup's service, sites and fixture site (those stay one at a
  // time, as their expectations about that shared state assume). On 2 cores this nearly halves the browser step.
  workers: 2,
  projects: [
    { name: 'own service', testMatch: OWN_SERVICE_SPECS, workers: 1 },
    { name: 'shared service', testIgnore: OWN_SERVICE_SPECS, workers: 1 },
  ],
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { ...(executablePath ? { executablePath } : {}), args: CHROMIUM_ARGS },
    trace: 'retain-on-failure',
  },
});
