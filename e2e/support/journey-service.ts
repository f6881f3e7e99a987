/**
 * The service with its demo, started for the journey spec the way `npm start` starts them (startServiceWithDemo), on
 * a fresh data directory and free ports. The global setup's service runs without the demo in the runner process;
 * the journey needs the demo site, its backend and the six fake ad platforms in reach, so it starts its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/server/settings';
import { startServiceWithDemo } from '../../src/demo/with-service';
import { readCredentials } from '../../src/demo/credentials';
import type { RunningDemo } from '../../src/demo/index';
import { freePort } from './real-service';
import { test } from './test';
import { copyPgliteImageInto } from '../../test/support/pglite-image';

export interface JourneyService {
  /** Loopback base URL of the service (REST API). */
  base: string;
  /** The API key the first start printed: the user's account, not the demo's. */
  apiKey: string;
  /** The demo backend's API key, as it keeps it in the data directory: the demo's own account. */
  demoApiKey: string;
  demo: RunningDemo;
  close(): Promise<void>;
}

/** Starts the service and its demo (the demo site on an ephemeral port). */
export async function startJourneyService(): Promise<JourneyService> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'cnv-e2e-journey-'));
  await copyPgliteImageInto(dataDir); // the migrated empty store: see real-service.ts
  const settings = loadSettings({
    HOST: '127.0.0.1',
    PORT: String(port),
    CNV_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.CNV_E2E_LOG_LEVEL ?? 'warn',
  });
  const running = await startServiceWithDemo({ ...settings, demoPort: 0 }).catch((error: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  const { service, demo } = running;
  const demoApiKey = readCredentials(join(dataDir, 'demo-store.json'))?.api_key;
  if (!service.apiKey || !demo || !demoApiKey) {
    await running.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error('the service started on a fresh data directory without a first-run API key, or without its demo and the demo key');
  }
  return {
    base: `http://127.0.0.1:${port}`,
    apiKey: service.apiKey,
    demoApiKey,
    demo,
    async close() {
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * One service with its demo for the spec file that calls this at its top level: started before its tests (a first start
 * takes long on a busy machine), closed after them. Returns a handle whose properties are the running service's, read
 * once it has started (inside the tests and their helpers).
 */
export function useJourneyService(): JourneyService {
  let journey: JourneyService | undefined;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    journey = await startJourneyService();
  });
  test.afterAll(async () => {
    // Closing stops the demo, the delivery workers and the store (its shutdown checkpoint syncs the data directory).
    // A fresh clone's CI run on this 2-core machine (2026-11-28) once ran out of the default 30 s here, after the
    // test itself had passed; alone it takes a few seconds. The start's allowance, and the time said when it is long,
    // so that a slow close can be told from a hung one (which still fails, at 120 s).
    test.setTimeout(120_000);
    const started = Date.now();
    await journey?.close();
    const seconds = (Date.now() - started) / 1000;
    if (seconds > 10) console.warn(`closing the journey service (service, demo, store) took ${seconds.toFixed(1)} s`);
  });
  return new Proxy({} as JourneyService, {
    get(_target, property) {
      if (!journey) throw new Error('useJourneyService: the service starts in beforeAll');
      return journey[property as keyof JourneyService];
    },
  });
}

/** The demo site's events (`GET /v1/events`, newest first), read with the demo backend's key: the demo has its own account. */
export async function demoEvents<T>(journey: JourneyService, query: Record<string, string> = {}): Promise<T[]> {
  const params = new URLSearchParams({ site_id: journey.demo.setup.site.id, limit: '100', ...query });
  const res = await fetch(`${journey.base}/v1/events?${params}`, { headers: { authorization: `Bearer ${journey.demoApiKey}` } });
  if (!res.ok) throw new Error(`GET /v1/events answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: T[] }).data;
}
