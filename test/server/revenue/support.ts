/**
 * A service wired to the four strict fakes with the demo's account, site, destinations and live signup flow, for the
 * revenue tests (value, later stages, adjustments), and signed webhook requests of any path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestService, type TestService } from '../support/harness';
import { ensureDemoSetup, type DemoSetup } from '../../../src/demo/setup';
import { demoPlatformEnv, startDemoAdPlatforms, type DemoAdPlatforms } from '../../../src/demo/ad-platforms';
import { SIGNATURE_HEADER } from '../../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../../src/protocol/hmac-node';
import { startDeliveryWorker, type DeliveryWorker } from '../../../src/server/delivery/worker';
import { serviceSecretBox } from '../../../src/server/db/secret-box';

export interface RevenueService {
  svc: TestService;
  fakes: DemoAdPlatforms;
  setup: DemoSetup;
  /** Sends a signed POST of `body` to a webhook path (the exact JSON bytes are signed). */
  post(path: string, body: unknown, options?: { rawBody?: string; secret?: string }): Promise<{ status: number; body: any }>;
  /** A REST call with the demo account's key (throws on a non-2xx answer). */
  api<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
  /** Sends everything due now (deliveries and adjustments) until nothing is left. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

export async function startRevenueService(options: { now?: () => Date } = {}): Promise<RevenueService> {
  const fakes = await startDemoAdPlatforms('v24.0');
  const svc = await createTestService(demoPlatformEnv(fakes));
  const base = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const dir = mkdtempSync(join(tmpdir(), 'cnv-revenue-'));
  const setup = await ensureDemoSetup({
    db: svc.db,
    box: serviceSecretBox(svc.settings),
    apiBase: base,
    demoOrigin: 'http://localhost:8788',
    credentialsFile: join(dir, 'demo-store.json'),
    log: { info: () => undefined },
  });
  let worker: DeliveryWorker | null = null;
  return {
    svc,
    fakes,
    setup,
    async post(path, body, opts = {}) {
      const payload = opts.rawBody ?? JSON.stringify(body);
      const signature = generateTestSignatureHeader({ secret: opts.secret ?? setup.webhookSecret, path, body: payload });
      const res = await svc.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature }, payload });
      return { status: res.statusCode, body: res.body ? res.json() : null };
    },
    api: (method, path, body) => setup.api.call(method, path, body),
    async drain() {
      worker ??= startDeliveryWorker({ db: svc.db, settings: svc.settings, log: quiet, autoStart: false, ...(options.now ? { now: options.now } : {}) });
      await worker.drain();
    },
    async close() {
      await worker?.stop();
      await svc.close();
      await fakes.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
