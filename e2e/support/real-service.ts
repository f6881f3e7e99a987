/**
 * Starts the real cnv service in process (the same startService that `npm start` runs) on a fresh data directory,
 * seeded with the migrated empty store the unit tests clone too (test/support/pglite-image.ts): the first start then
 * skips initdb and the migrations (tens of seconds of WASM on a busy machine) and does everything else a first start does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings, type Settings } from '../../src/server/settings';
import { startService } from '../../src/server/service';
import type { Database } from '../../src/server/db/db';
import { copyPgliteImageInto } from '../../test/support/pglite-image';

export interface RunningService {
  /** Loopback base URL for the harness's own REST calls. */
  base: string;
  port: number;
  /** The API key printed on first run. */
  apiKey: string;
  /** The bootstrap site (domain null). */
  bootstrapSite: { id: string; site_key: string; domain: string | null };
  /** The service's own store handle, for read-only checks of what it stored (through the store module). */
  db: Database;
  /** The dashboard sign-in link the first start printed. */
  signInLink?: string;
  /** The settings the service runs with. */
  settings?: Settings;
  close(): Promise<void>;
}

/** A free loopback port (chosen up front so the public URL can name it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts the service with the embedded store in a temp directory; `publicHost` is the name pages use for it. */
export async function startRealService(publicHost: string, env: Record<string, string> = {}): Promise<RunningService> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'cnv-e2e-data-'));
  await copyPgliteImageInto(dataDir);
  const settings = loadSettings({
    HOST: '127.0.0.1',
    PORT: String(port),
    CNV_PUBLIC_URL: `http://${publicHost}:${port}`,
    CNV_DATA_DIR: dataDir,
    CNV_DEMO_PORT: 'off',
    LOG_LEVEL: process.env.CNV_E2E_LOG_LEVEL ?? 'warn',
    ...env,
  });
  const service = await startService(settings);
  if (!service.apiKey) throw new Error('startService on a fresh data directory returned no first-run API key');
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    apiKey: service.apiKey,
    bootstrapSite: service.site,
    db: service.db,
    ...(service.dashboardLink ? { signInLink: service.dashboardLink.url } : {}),
    settings,
    async close() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
