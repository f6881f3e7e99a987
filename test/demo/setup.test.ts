import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../server/support/harness';
import { ensureDemoSetup, DEMO, type DemoSetupOptions } from '../../src/demo/setup';
import { DEMO_ACCOUNTS, demoPlatformEnv, startDemoAdPlatforms, type DemoAdPlatforms } from '../../src/demo/ad-platforms';
import { readCredentials, writeCredentials } from '../../src/demo/credentials';
import { findAccountByApiKey, issueApiKey } from '../../src/server/accounts';
import { activeWebhookSecrets } from '../../src/server/webhook';
import { serviceSecretBox } from '../../src/server/db/secret-box';

describe('the first-run demo setup', () => {
  let svc: TestService;
  let fakes: DemoAdPlatforms;
  let dir: string;
  let options: DemoSetupOptions;
  const logged: string[] = [];

  beforeAll(async () => {
    fakes = await startDemoAdPlatforms('v24.0');
    svc = await createTestService(demoPlatformEnv(fakes));
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const address = svc.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    dir = mkdtempSync(join(tmpdir(), 'cnv-demo-setup-'));
    options = {
      db: svc.db,
      box: serviceSecretBox(svc.settings),
      apiBase: `http://127.0.0.1:${port}`,
      demoOrigin: 'http://localhost:8788',
      credentialsFile: join(dir, 'demo-store.json'),
      log: { info: (message) => logged.push(message) },
    };
  });

  afterAll(async () => {
    await svc?.close();
    await fakes?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates its own account, the demo site, six destinations, the API trigger source and a live flow', async () => {
    const setup = await ensureDemoSetup(options);

    expect(setup.accountId).not.toBe(svc.accountId);
    expect(setup.site).toMatchObject({ name: DEMO.siteName, domain: 'http://localhost:8788' });
    expect(setup.flow).toMatchObject({
      site_id: setup.site.id,
      name: DEMO.flowName,
      status: 'live',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: DEMO.triggerKey },
      actions_config: [
        { integrationId: 'google-ads', config: { conversion: { id: DEMO_ACCOUNTS.google.conversionActionId } } },
        { integrationId: 'meta', config: { event_name: 'CompleteRegistration' } },
        { integrationId: 'microsoft-ads', config: { conversion_name: DEMO_ACCOUNTS.microsoft.goalName } },
        { integrationId: 'linkedin', config: { conversion_rule: DEMO_ACCOUNTS.linkedin.conversionRuleId } },
        { integrationId: 'reddit', config: { event_name: 'SIGN_UP' } },
        { integrationId: 'tiktok', config: { event_name: 'CompleteRegistration' } },
      ],
    });
    expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), setup.site.id)).toEqual([setup.webhookSecret]);
    expect(setup.created).toEqual([
      `the account "${DEMO.accountName}"`,
      'an API key for the demo backend',
      `the site "${DEMO.siteName}"`,
      'the google-ads destination',
      'the meta destination',
      'the microsoft-ads destination',
      'the linkedin destination',
      'the reddit destination',
      'the tiktok destination',
      `the API trigger source of "${DEMO.siteName}" and its webhook secret`,
      `the flow "${DEMO.flowName}"`,
      `published "${DEMO.flowName}"`,
      `the flow "${DEMO.stageFlowName}"`,
      `published "${DEMO.stageFlowName}"`,
    ]);
    // The paid plan: a later stage of its own flow, to the same six platforms.
    expect(setup.stageFlow).toMatchObject({
      site_id: setup.site.id,
      name: DEMO.stageFlowName,
      status: 'live',
      trigger_config: { type: 'conversion', integrationId: 'api', key: DEMO.stageTriggerKey },
      actions_config: DEMO.stageActions,
    });
    expect(setup.stageFlow.actions_config.map((a) => a.integrationId)).toEqual(setup.flow.actions_config.map((a) => a.integrationId));
    expect(logged.at(-1)).toMatch(/^demo setup created /);
  });

  it('connected each destination through GET /v1/destinations’ eyes, with the accounts typed on the hosted forms', async () => {
    const key = readCredentials(options.credentialsFile)!.api_key;
    const res = await fetch(`${options.apiBase}/v1/destinations`, { headers: { authorization: `Bearer ${key}` } });
    const { data } = (await res.json()) as { data: Array<{ type: string; status: string; account: Record<string, unknown> }> };
    expect(data.map((d) => [d.type, d.status])).toEqual([
      ['google-ads', 'connected'],
      ['meta', 'connected'],
      ['microsoft-ads', 'connected'],
      ['linkedin', 'connected'],
      ['reddit', 'connected'],
      ['tiktok', 'connected'],
    ]);
    expect(data[0]!.account).toMatchObject({ customer_id: '1234567890', api: 'data_manager' });
    expect(data[1]!.account).toMatchObject({ pixel_id: DEMO_ACCOUNTS.meta.pixelId });
    expect(data[2]!.account).toMatchObject({ customer_id: DEMO_ACCOUNTS.microsoft.customerId, account_id: DEMO_ACCOUNTS.microsoft.accountId });
    expect(data[3]!.account).toMatchObject({ ad_account_id: DEMO_ACCOUNTS.linkedin.adAccountId });
    expect(data[4]!.account).toEqual({ pixel_id: DEMO_ACCOUNTS.reddit.pixelId });
    expect(data[5]!.account).toEqual({ pixel_code: DEMO_ACCOUNTS.tiktok.pixelCode });
    for (const token of [DEMO_ACCOUNTS.meta.accessToken, DEMO_ACCOUNTS.reddit.accessToken, DEMO_ACCOUNTS.tiktok.accessToken]) {
      expect(JSON.stringify(data)).not.toContain(token);
    }
  });

  it('went through each platform’s sign-in: the fakes saw the OAuth authorize and the code exchange with PKCE', () => {
    const authorize = (requests: ReadonlyArray<{ method: string; path: string; query: URLSearchParams }>, path: string) =>
      requests.filter((r) => r.method === 'GET' && r.path === path);
    const exchanges = (requests: ReadonlyArray<{ method: string; path: string; body: any }>, path: string) =>
      requests.filter((r) => r.method === 'POST' && r.path === path && r.body?.grant_type === 'authorization_code');

    const google = fakes.google.server.requests;
    expect(authorize(google, '/o/oauth2/v2/auth')).toHaveLength(1);
    expect(authorize(google, '/o/oauth2/v2/auth')[0]!.query.get('code_challenge_method')).toBe('S256');
    expect(exchanges(google, '/token')).toHaveLength(1);
    expect(exchanges(google, '/token')[0]!.body.code_verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);

    const microsoft = fakes.microsoft.requests;
    expect(authorize(microsoft, '/common/oauth2/v2.0/authorize')).toHaveLength(1);
    expect(exchanges(microsoft, '/common/oauth2/v2.0/token')).toHaveLength(1);

    const linkedin = fakes.linkedin.requests;
    expect(authorize(linkedin, '/oauth/v2/authorization')).toHaveLength(1);
    expect(exchanges(linkedin, '/oauth/v2/accessToken')).toHaveLength(1);

    for (const fake of [fakes.google.server, fakes.microsoft, fakes.linkedin, fakes.meta]) {
      expect(fake.requests.flatMap((r) => r.problems)).toEqual([]);
    }
  });

  it('leaves the first account alone: its key sees none of the demo', async () => {
    const sites = await svc.app.inject({ method: 'GET', url: '/v1/sites', headers: svc.auth });
    expect((sites.json() as { data: Array<{ name: string }> }).data.map((s) => s.name)).not.toContain(DEMO.siteName);
    const destinations = await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth });
    expect((destinations.json() as { data: unknown[] }).data).toEqual([]);
    const handoffs = await svc.db.query<{ purpose: string; status: string }>('select purpose, status from handoffs where account_id = $1', [svc.accountId]);
    expect(handoffs).toEqual([]);
  });

  it('keeps its API key only in its credentials file, readable by its owner alone, and the key opens the demo account', async () => {
    const stored = readCredentials(options.credentialsFile);
    expect(stored?.api_key).toMatch(/^cnv_sk_/);
    expect(statSync(options.credentialsFile).mode & 0o777).toBe(0o600);
    expect((await findAccountByApiKey(svc.db, stored!.api_key))?.name).toBe(DEMO.accountName);
  });

  it('creates nothing on a second start and finds the same account, site, flow and secret', async () => {
    const first = await ensureDemoSetup(options);
    const again = await ensureDemoSetup(options);
    expect(again.created).toEqual([]);
    expect(again.accountId).toBe(first.accountId);
    expect(again.site.id).toBe(first.site.id);
    expect(again.flow.id).toBe(first.flow.id);
    expect(again.stageFlow.id).toBe(first.stageFlow.id);
    expect(again.webhookSecret).toBe(first.webhookSecret);
    const flows = await svc.db.query('select id from flows where site_id = $1', [first.site.id]);
    expect(flows).toHaveLength(2);
  });

  it('moves the site to a new demo origin when the demo port changed', async () => {
    const moved = await ensureDemoSetup({ ...options, demoOrigin: 'http://localhost:9999' });
    expect(moved.site.domain).toBe('http://localhost:9999');
    expect(moved.created).toEqual(['the domain http://localhost:9999 of "Demo store"']);
  });

  it('issues a new key for its own account when its credentials file is lost, and reuses everything else', async () => {
    const before = await ensureDemoSetup(options);
    rmSync(options.credentialsFile);
    const after = await ensureDemoSetup(options);
    expect(after.created).toEqual(['an API key for the demo backend']);
    expect(after.accountId).toBe(before.accountId);
    expect(after.flow.id).toBe(before.flow.id);
  });

  it('moves off the first account when an earlier demo had joined it, and revokes the key it had there', async () => {
    const before = await ensureDemoSetup(options);
    const { key: oldKey } = await issueApiKey(svc.db, svc.accountId, DEMO.apiKeyLabel);
    writeCredentials(options.credentialsFile, { api_key: oldKey });
    const after = await ensureDemoSetup(options);
    expect(after.accountId).toBe(before.accountId);
    expect(after.created).toEqual(['an API key for the demo backend']);
    expect(await findAccountByApiKey(svc.db, oldKey)).toBeNull();
    expect(await findAccountByApiKey(svc.db, svc.apiKey)).not.toBeNull();
  });

  it('publishes the demo flow again when it was unpublished', async () => {
    const setup = await ensureDemoSetup(options);
    await setup.api.call('POST', `/v1/flows/${setup.flow.id}/unpublish`);
    const again = await ensureDemoSetup(options);
    expect(again.flow).toMatchObject({ id: setup.flow.id, status: 'live' });
    expect(again.created).toEqual([`published "${DEMO.flowName}"`]);
  });
});
