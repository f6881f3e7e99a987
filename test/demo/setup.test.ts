import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../server/support/harness';
import { ensureDemoSetup, DEMO, type DemoSetupOptions } from '../../src/demo/setup';
import { readCredentials } from '../../src/demo/credentials';
import { activeWebhookSecrets } from '../../src/server/webhook/secret-sql';
import { destinationSettings } from '../../src/server/destinations/sql';

describe('the first-run demo setup', () => {
  let svc: TestService;
  let dir: string;
  let options: DemoSetupOptions;
  const logged: string[] = [];

  beforeAll(async () => {
    svc = await createTestService();
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const address = svc.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    dir = mkdtempSync(join(tmpdir(), 'cnv-demo-setup-'));
    options = {
      db: svc.db,
      apiBase: `http://127.0.0.1:${port}`,
      demoOrigin: 'http://localhost:8788',
      credentialsFile: join(dir, 'demo-store.json'),
      log: { info: (message) => logged.push(message) },
    };
  });

  afterAll(async () => {
    await svc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the demo site, Google Ads destination, API trigger source and a live flow on a fresh account', async () => {
    const setup = await ensureDemoSetup(options);

    expect(setup.accountId).toBe(svc.accountId);
    expect(setup.site).toMatchObject({ name: DEMO.siteName, domain: 'http://localhost:8788' });
    expect(setup.flow).toMatchObject({
      site_id: setup.site.id,
      name: DEMO.flowName,
      status: 'live',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: DEMO.triggerKey },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: DEMO.conversionActionId } } }],
    });
    expect(await activeWebhookSecrets(svc.db, setup.site.id)).toEqual([setup.webhookSecret]);
    expect(await destinationSettings(svc.db, svc.accountId, 'google-ads')).toMatchObject({
      customer_id: DEMO.googleAdsCustomerId.replace(/-/g, ''),
      access_token: DEMO.googleAdsAccessToken,
    });
    expect(setup.created).toHaveLength(6);
    expect(logged.at(-1)).toMatch(/^demo setup created /);
  });

  it('went through the public paths: the handoffs it opened are completed, seen through the API', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/sites', headers: svc.auth });
    const names = (res.json() as { data: Array<{ name: string }> }).data.map((s) => s.name);
    expect(names).toContain(DEMO.siteName);
    const handoffs = await svc.db.query<{ id: string; purpose: string; status: string }>(
      'select id, purpose, status from handoffs where account_id = $1 order by created_at',
      [svc.accountId],
    );
    expect(handoffs.map((h) => [h.purpose, h.status])).toEqual([
      ['connect_destination', 'completed'],
      ['connect_trigger_source', 'completed'],
    ]);
  });

  it('keeps its API key only in its credentials file, readable by its owner alone, and the key works', async () => {
    const stored = readCredentials(options.credentialsFile);
    expect(stored?.api_key).toMatch(/^cnv_sk_/);
    expect(statSync(options.credentialsFile).mode & 0o777).toBe(0o600);
    const res = await fetch(`${options.apiBase}/v1/sites`, { headers: { authorization: `Bearer ${stored!.api_key}` } });
    expect(res.status).toBe(200);
  });

  it('creates nothing on a second start and finds the same site, flow and secret', async () => {
    const first = await ensureDemoSetup(options);
    const again = await ensureDemoSetup(options);
    expect(again.created).toEqual([]);
    expect(again.site.id).toBe(first.site.id);
    expect(again.flow.id).toBe(first.flow.id);
    expect(again.webhookSecret).toBe(first.webhookSecret);
    const flows = await svc.db.query('select id from flows where site_id = $1', [first.site.id]);
    expect(flows).toHaveLength(1);
  });

  it('moves the site to a new demo origin when the demo port changed', async () => {
    const moved = await ensureDemoSetup({ ...options, demoOrigin: 'http://localhost:9999' });
    expect(moved.site.domain).toBe('http://localhost:9999');
    expect(moved.created).toEqual(['the domain http://localhost:9999 of "Demo store"']);
    const sites = await svc.db.query('select id from sites where name = $1', [DEMO.siteName]);
    expect(sites).toHaveLength(1);
  });

  it('issues a new API key when its credentials file is lost, and reuses everything else', async () => {
    const before = await ensureDemoSetup(options);
    rmSync(options.credentialsFile);
    const after = await ensureDemoSetup(options);
    expect(after.created).toEqual(['an API key for the demo backend']);
    expect(after.site.id).toBe(before.site.id);
    expect(after.flow.id).toBe(before.flow.id);
    expect(readCredentials(options.credentialsFile)?.api_key).toMatch(/^cnv_sk_/);
  });

  it('publishes the demo flow again when it was unpublished', async () => {
    const setup = await ensureDemoSetup(options);
    const res = await svc.app.inject({ method: 'POST', url: `/v1/flows/${setup.flow.id}/unpublish`, headers: svc.auth });
    expect(res.json()).toMatchObject({ status: 'draft' });
    const again = await ensureDemoSetup(options);
    expect(again.flow).toMatchObject({ id: setup.flow.id, status: 'live' });
    expect(again.created).toEqual([`published "${DEMO.flowName}"`]);
  });
});
