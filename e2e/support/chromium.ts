/** How the browser tests and the benchmark launch Chromium: Playwright's own build when installed, else the system's. */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium } from '@playwright/test';

const SYSTEM_CHROMIUMS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** Host names the tests use; all resolve to loopback, so cookie domains and subdomains are real. */
export const TEST_HOST_RULES = 'MAP *.example.com 127.0.0.1, MAP example.com 127.0.0.1, MAP *.example.net 127.0.0.1, MAP *.cnv.test 127.0.0.1, MAP cnv.test 127.0.0.1';

/** The executable to launch: CHROMIUM_PATH, Playwright's bundled Chromium if present, else a system Chromium. */
export function chromiumExecutable(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    const bundled = chromium.executablePath();
    if (bundled && existsSync(bundled)) return undefined;
  } catch {
    // no bundled browser registered: fall through to the system one
  }
  return SYSTEM_CHROMIUMS.find((path) => existsSync(path));
}

/** Flags for this machine: no sandbox as root, no GPU, no background traffic to the closed network. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
  `--host-resolver-rules=${TEST_HOST_RULES}`,
];

/**
 * Chromium's own pages that every window of a full (new-headless) Chromium preloads: the address bar's WebUI popups
 * (`chrome://omnibox-popup.top-chrome/`, and its "AI mode" variant), each in a renderer of its own. Playwright opens a
 * window per browser context, so every test paid for them: on this 2-core machine that renderer used more CPU than the
 * tested pages' own renderers (43 s against 36 s of CPU over form-detectors and dashboard-delivery), and switching them
 * off took the whole browser step's CPU down by a third. A headless test never opens the address bar.
 */
export const UNUSED_BROWSER_UI_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup', 'PreloadTopChromeWebUI'];

/**
 * The features Playwright itself disables at launch (its `--disable-features` switch), read from the installed
 * playwright-core. Chromium keeps only the last `--disable-features` of its command line, so a launch that disables
 * more must repeat Playwright's list, or it would turn those back on (HttpsUpgrades among them: an http:// navigation
 * would become https://). Returns null when the list cannot be found in this version of Playwright.
 */
export function playwrightDisabledFeatures(): string[] | null {
  try {
    const bundle = readFileSync(createRequire(import.meta.url).resolve('playwright-core/lib/coreBundle'), 'utf8');
    const list = /\bdisabledFeatures = \[([\s\S]*?)\]\.filter\(Boolean\)/.exec(bundle)?.[1];
    if (!list) return null;
    const features = [...list.replace(/\/\/.*$/gm, '').matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => m[1]!);
    return features.length > 0 ? features : null;
  } catch {
    return null;
  }
}

/**
 * The arguments of a Playwright launch: CHROMIUM_ARGS, and Playwright's disabled features with the unused browser UI
 * added. When Playwright's list cannot be read, Playwright's own switch is left as it is (the tests stay correct, only
 * slower), and e2e/chromium-launch.spec.ts fails, saying so.
 */
export function playwrightLaunchArgs(): string[] {
  const playwright = playwrightDisabledFeatures();
  if (!playwright) return CHROMIUM_ARGS;
  return [...CHROMIUM_ARGS, `--disable-features=${[...playwright, ...UNUSED_BROWSER_UI_FEATURES].join(',')}`];
}
