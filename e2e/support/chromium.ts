/** How the browser tests and the benchmark launch Chromium: Playwright's own build when installed, else the system's. */
import { existsSync } from 'node:fs';
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
