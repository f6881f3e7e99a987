/**
 * While `npm start`'s demo points a platform at its local fake, the hosted connect page shows the values that fake
 * accepts beside each field (so a new user can connect it), marked as the fake's; with the real platform configured,
 * or the API pointed anywhere but the fake, it never does.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { DEMO_FORM_VALUES, settingsForDemoPlatforms, startDemoAdPlatforms, type DemoAdPlatforms } from '../../src/demo/ad-platforms';
import { loadSettings } from '../../src/server/settings';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const pathOf = (url: string) => new URL(url).pathname;

describe.each(DATABASE_KINDS)('the local fakes’ test values on the hosted page on $name', (kind) => {
  let fakes: DemoAdPlatforms;
  let demo: RestService;
  let real: RestService;
  beforeAll(async () => {
    fakes = await startDemoAdPlatforms(loadSettings({}).meta.apiVersion);
    demo = await createRestService(kind, {}, undefined, (settings) => settingsForDemoPlatforms(settings, fakes));
    real = await createRestService(kind);
  });
  afterAll(async () => {
    await demo?.close();
    await real?.close();
    await fakes?.close();
  });

  const pageOf = async (svc: RestService, type: string) => {
    const handoff = json<{ id: string; url: string }>(
      await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_destination', destination_type: type } }),
    );
    return { handoff, body: (await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) })).body };
  };

  it.each(['meta', 'reddit', 'tiktok'] as const)('shows %s’s fake values beside its fields, marked as the fake’s', async (type) => {
    const { body } = await pageOf(demo, type);
    for (const [field, value] of Object.entries(DEMO_FORM_VALUES[type])) {
      expect(body).toContain(`<div class="fake-value" id="${field}-fake">`);
      expect(body).toContain(`<pre id="${field}-fake-value">${value}</pre>`);
      expect(body).toMatch(new RegExp(`id="${field}"[^>]*aria-describedby="[^"]*${field}-fake`));
    }
    expect(body).toContain("Test value of the demo's local fake (not a real account)");
    expect(body).toContain('takes only the demo’s test values, shown beside each field');
  });

  it('connects Meta with the values shown', async () => {
    const { handoff } = await pageOf(demo, 'meta');
    const values = DEMO_FORM_VALUES.meta;
    const done = await demo.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: new URLSearchParams(values).toString() });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Meta is connected to cnv');
  });

  it('shows the sign-in platforms’ values on the form after the sign-in, and says so before it', async () => {
    const { body } = await pageOf(demo, 'microsoft-ads');
    expect(body).toContain('shown beside each field after the sign-in');
    expect(body).not.toContain('class="fake-value"');
  });

  it('never shows them with the real platforms', async () => {
    for (const type of ['meta', 'reddit', 'tiktok']) {
      const { body } = await pageOf(real, type);
      expect(body).not.toContain('class="fake-value"');
      expect(body).not.toContain('Test value');
      expect(body).not.toContain(DEMO_FORM_VALUES[type as 'meta' | 'reddit' | 'tiktok'].access_token);
    }
  });

  it('never shows them when the API is pointed somewhere else than the fake', async () => {
    const proxied = await createRestService(kind, {}, undefined, (settings) => {
      const faked = settingsForDemoPlatforms(settings, fakes);
      return { ...faked, meta: { ...faked.meta, graphApiBase: 'http://127.0.0.1:9' } };
    });
    try {
      const { body } = await pageOf(proxied, 'meta');
      expect(body).toContain('Not the real Meta');
      expect(body).not.toContain('class="fake-value"');
      expect(body).not.toContain(DEMO_FORM_VALUES.meta.access_token);
    } finally {
      await proxied.close();
    }
  });
});

describe('docs/demo.md', () => {
  it('lists every value the fakes take on the hosted pages, as src/demo/ad-platforms.ts defines them', () => {
    const doc = readFileSync(new URL('../../docs/demo.md', import.meta.url), 'utf8');
    for (const values of Object.values(DEMO_FORM_VALUES)) for (const value of Object.values(values)) expect(doc).toContain(`\`${value}\``);
  });
});
