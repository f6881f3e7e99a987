/** Launches Chromium exactly as the browser tests do (same executable choice and flags, from e2e/support/chromium.ts). */
import { chromium } from '@playwright/test';
import { importTs } from './ts-module.mjs';

/**
 * Starts a headless Chromium with the project's flags (loopback host rules included), plus one: automation no longer
 * sets `navigator.webdriver`, because Plausible's tracker sends nothing when it is true and would look cheaper than it is.
 */
export async function launchChromium() {
  const { CHROMIUM_ARGS, chromiumExecutable } = await importTs('e2e/support/chromium.ts');
  const executablePath = chromiumExecutable();
  const args = [...CHROMIUM_ARGS, '--disable-blink-features=AutomationControlled'];
  const browser = await chromium.launch({ headless: true, ...(executablePath ? { executablePath } : {}), args });
  return { browser, executablePath: executablePath ?? chromium.executablePath(), version: browser.version() };
}
