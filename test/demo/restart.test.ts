/**
 * A second start of the demo on the same data: new in-process fakes, which never issued the refresh tokens the first
 * start stored. The demo must still deliver its first conversions after the restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/server/app';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts';
import { loadSettings, type Settings } from '../../src/server/settings';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { ensureDemoSetup, DEMO, type DemoSetup, type DemoSetupOptions } from '../../src/demo/setup';
import { DEMO_SIGN_IN_PLATFORMS, demoPlatformEnv, startDemoAdPlatforms, type DemoAdPlatforms } from '../../src/demo/ad-platforms';
import { SIGNATURE_HEADER, saasSignupPath } from '../../src/protocol/webhook';
import { snapshotsPath } from '../../src/protocol/collector';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { openMigratedPglite } from '../support/pglite';
import { newToken, snapshotBody } from '../server/support/fixtures';
import { serviceSecretBox } from '../../src/server/db/secret-box';

const ORIGIN = 'http://localhost:8788';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** One start of the demo: its fakes, the service pointed at them, and the demo setup; the database outlives it. */
interface Start {
  fakes: DemoAdPlatforms;
  app: FastifyInstance;
  settings: Settings;
  setup: DemoSetup;
  close(): Promise<void>;
}

describe('the demo on its second start on the same data', () => {
  let db: Database;
  let dir: string;
  let second: Start;
  const logged: string[] = [];

  async function start(): Promise<Start> {
    const fakes = await startDemoAdPlatforms('v24.0');
    const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: '5'.repeat(64), ...demoPlatformEnv(fakes) });
    const app = await buildApp({ db, settings, logger: false });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const options: DemoSetupOptions = {
      db, box: serviceSecretBox(settings), apiBase: base, demoOrigin: ORIGIN, credentialsFile: join(dir, 'demo-store.json'), log: { info: (message) => logged.push(message) },
    };
    const setup = await ensureDemoSetup(options);
    return { fakes, app, settings, setup, close: async () => (await app.close(), await fakes.close()) };
  }

  beforeAll(async () => {
    db = await openMigratedPglite();
    await insertAccount(db, 'First account');
    dir = mkdtempSync(join(tmpdir(), 'cnv-demo-restart-'));
    const first = await start();
    await first.close();
    second = await start();
  });

  afterAll(async () => {
    await second?.close();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs in again to the platforms whose fakes forgot their grants, creating nothing', () => {
    expect(second.setup.created).toEqual([]);
    expect(second.setup.reconnected).toEqual([...DEMO_SIGN_IN_PLATFORMS]);
    expect(logged.at(-1)).toMatch(/^demo setup signed in again with google-ads, microsoft-ads, linkedin/);
  });

  it('delivers a signup reported after the restart to all six platforms', async () => {
    const { app, setup, fakes, settings } = second;
    const token = newToken();
    const clicks = { gclid: 'Cj0KCQ-restart', fbclid: 'IwAR-restart', msclkid: 'a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d', li_fat_id: 'li-restart' };
    const now = Date.now();
    const beacon = await app.inject({
      method: 'POST', url: snapshotsPath(setup.site.site_key), headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8' },
      payload: JSON.stringify(snapshotBody({
        correlation_token: token, occurred_at: new Date(now - 60_000).toISOString(), page_url: `${ORIGIN}/signup`,
        touch: { click_ids: clicks, utm: {}, landing_page_url: `${ORIGIN}/`, referrer: null, captured_at: new Date(now - 3_600_000).toISOString() },
      })),
    });
    expect(beacon.statusCode).toBe(204);
    const path = saasSignupPath(setup.site.site_key, DEMO.triggerKey);
    const payload = JSON.stringify({ customer_event_id: 'usr_after_restart', correlation_token: token, email: 'ada@example.com' });
    const report = await app.inject({
      method: 'POST', url: path, payload,
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: setup.webhookSecret, path, body: payload }) },
    });
    expect(report.statusCode, report.body).toBe(200);

    const worker = startDeliveryWorker({ db, settings, log: quiet, autoStart: false });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }

    const events = (await setup.api.call<{ data: Array<{ customer_event_id: string; status: string; actions: Array<{ destination: string; status: string }> }> }>(
      'GET', `/v1/events?site_id=${setup.site.id}&limit=10`,
    )).data;
    const event = events.find((e) => e.customer_event_id === 'usr_after_restart')!;
    expect(event.actions.map((a) => [a.destination, a.status])).toEqual(DEMO.actions.map((a) => [a.integrationId, 'delivered']));
    expect(fakes.google.ingested()).toHaveLength(1);
    expect(fakes.microsoft.applied).toHaveLength(1);
    expect(fakes.linkedin.events).toHaveLength(1);
    const destinations = (await setup.api.call<{ data: Array<{ type: string; status: string }> }>('GET', '/v1/destinations')).data;
    expect(destinations.every((d) => d.status === 'connected')).toBe(true);
  });
});
