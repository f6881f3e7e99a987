import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { activeWebhookSecrets } from '../../src/server/webhook/secret-sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { startFakeServer } from '../../src/demo/fakes/fake-server';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe.each(DATABASE_KINDS)('hosted handoff pages on $name', (kind) => {
  let svc: RestService;
  const logs: string[] = [];
  beforeAll(async () => {
    // Everything the app logs, at the most verbose level, to prove the secret never reaches a log.
    svc = await createRestService(kind, {}, { level: 'trace', stream: { write: (line: string) => logs.push(line) } });
  });
  afterAll(() => svc.close());

  const newHandoff = async (payload: object, auth = svc.auth) =>
    json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: auth, payload }));
  const pathOf = (url: string) => new URL(url).pathname;
  const poll = async (id: string, auth = svc.auth) => json(await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${id}`, headers: auth }));
  const submit = (url: string, form: Record<string, string> = {}) =>
    svc.app.inject({ method: 'POST', url: pathOf(url), headers: FORM, payload: new URLSearchParams(form).toString() });
  const secretIn = (html: string) => /whsec_[A-Za-z0-9]{32}/.exec(html)?.[0];

  it('serves the hosted page as HTML that is never cached, framed or leaked through a Referer', async () => {
    const handoff = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' });
    const res = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.body).toMatch(/^<!doctype html>/);
  });

  describe('connecting a destination with a form (Meta: no OAuth step)', () => {
    const TOKEN = 'EAABsecretTokenFromEventsManager123';

    it('shows a consent screen that says what is connected and asks for the dataset id and token', async () => {
      const handoff = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' });
      const page = (await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) })).body;
      expect(page).toContain('Connect Meta');
      expect(page).toContain('name="pixel_id"');
      expect(page).toContain('type="password" id="access_token"');
      expect(page).toContain('<form method="post">');
      // The platform's real API: no word of a fake.
      expect(page).not.toContain('Not the real Meta');
    });

    it("says so when this service sends the platform's calls elsewhere (the demo's fake), naming the setting and the way out", async () => {
      const faked = await createRestService(kind, { CNV_META_GRAPH_API_BASE: 'http://127.0.0.1:9/' });
      try {
        const handoff = json<{ url: string }>(
          await faked.app.inject({ method: 'POST', url: '/v1/handoffs', headers: faked.auth, payload: { purpose: 'connect_destination', destination_type: 'meta' } }),
        );
        const page = (await faked.app.inject({ method: 'GET', url: pathOf(handoff.url) })).body;
        expect(page).toContain('Not the real Meta');
        expect(page).toContain('<code>http://127.0.0.1:9</code> (set by <code>CNV_META_GRAPH_API_BASE</code>)');
        expect(page).toContain('CNV_DEMO_PORT=off');
      } finally {
        await faked.close();
      }
    });

    it("never shows a pasted token Meta's refusal quotes back, whatever its separators or length (the message is cut at 160)", async () => {
      // A Graph API that refuses every token and quotes it, wherever it was sent.
      const graph = await startFakeServer<never>('echoing Graph API', (request) => {
        const sent = request.query.get('access_token') ?? request.body?.access_token ?? request.headers.authorization ?? '';
        return { status: 400, json: { error: { type: 'OAuthException', code: 190, message: `Invalid OAuth access token - Cannot parse access token: ${sent}` } } };
      });
      const echoing = await createRestService(kind, { CNV_META_GRAPH_API_BASE: graph.url });
      try {
        for (const token of [`EAAB${'Zq7'.repeat(10)}|tail.x9Q`, `EAAB|${'ab12.cd34-ef56/'.repeat(12)}`]) {
          const handoff = json<{ url: string }>(
            await echoing.app.inject({ method: 'POST', url: '/v1/handoffs', headers: echoing.auth, payload: { purpose: 'connect_destination', destination_type: 'meta' } }),
          );
          const res = await echoing.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: new URLSearchParams({ pixel_id: '1234567890', access_token: token }).toString() });
          expect(res.statusCode).toBe(400);
          expect(res.body).toContain('Cannot parse access token: [removed]');
          for (const part of ['EAAB', 'tail', 'x9Q', 'ab12', 'cd34']) expect(res.body, `${token}: ${part}`).not.toContain(part);
        }
        expect(graph.requests.length).toBeGreaterThanOrEqual(2);
      } finally {
        await echoing.close();
        await graph.close();
      }
    });

    it('re-shows the form with the reason for a bad dataset id, never echoing the token, and connects nothing', async () => {
      const tenant = await svc.addTenant('Bad form');
      const handoff = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' }, tenant.auth);
      for (const form of [{}, { pixel_id: '12', access_token: TOKEN }, { pixel_id: 'abc', access_token: TOKEN }, { pixel_id: '1234567890', access_token: 'short' }] as Record<string, string>[]) {
        const res = await submit(handoff.url, form);
        expect(res.statusCode).toBe(400);
        expect(res.body).toMatch(/Please correct the fields/);
        expect(res.body).not.toContain(TOKEN);
      }
      expect((await poll(handoff.id, tenant.auth)).status).toBe('pending');
      expect(await svc.db.query('select 1 from destinations where account_id = $1', [tenant.accountId])).toHaveLength(0);
    });

    it('connects the account, completes the handoff, and then cannot be used again', async () => {
      const tenant = await svc.addTenant('Ads');
      const handoff = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' }, tenant.auth);
      const res = await submit(handoff.url, { pixel_id: '1234567890123456', access_token: TOKEN });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Meta is connected to cnv');
      // In cnv's own voice, with Meta's logo inlined (no third-party host) and a way back to the dashboard.
      expect(res.body).toMatch(/<svg class="logo"[^>]*aria-label="Meta logo"/);
      expect(res.body).toContain('<a class="button" href="/dashboard/destinations">Back to the dashboard</a>');
      expect(res.body).not.toMatch(/<img|https:\/\/cdn|An application/);
      expect(res.body).not.toContain(TOKEN);
      const rows = await svc.db.query<{ type: string; settings: Record<string, unknown>; credentials: string }>(
        'select type, settings, credentials from destinations where account_id = $1', [tenant.accountId],
      );
      expect(rows).toEqual([{ type: 'meta', settings: { pixel_id: '1234567890123456' }, credentials: expect.stringMatching(/^v1\./) }]);
      expect(rows[0]!.credentials).not.toContain(TOKEN);
      const polled = await poll(handoff.id, tenant.auth);
      expect(polled.status).toBe('completed');
      expect(new Date(polled.completed_at).getTime()).toBeGreaterThan(0);
      expect(JSON.stringify(polled)).not.toContain(TOKEN);

      const again = await submit(handoff.url, { pixel_id: '9999999999', access_token: TOKEN });
      expect(again.statusCode).toBe(409);
      expect(again.body).toContain('already used');
      const page = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
      expect(page.body).toContain('already used');
      expect(page.body).not.toContain('<form');
    });

    it('replaces the connection of an account that connects Meta again through a new handoff', async () => {
      const tenant = await svc.addTenant('Reconnect');
      for (const id of ['111111111111', '222222222222']) {
        const handoff = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' }, tenant.auth);
        expect((await submit(handoff.url, { pixel_id: id, access_token: TOKEN })).statusCode).toBe(200);
      }
      const rows = await svc.db.query<{ settings: Record<string, unknown> }>('select settings from destinations where account_id = $1', [tenant.accountId]);
      expect(rows).toEqual([{ settings: { pixel_id: '222222222222' } }]);
    });
  });

  it('says at once which setting the operator must set when the service has no OAuth client for the platform', async () => {
    const handoff = await newHandoff({ purpose: 'connect_destination', destination_type: 'google-ads' });
    const res = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('CNV_GOOGLE_OAUTH_CLIENT_ID');
    expect(res.body).not.toContain('Sign in with');
  });

  it('names the account that receives the connection on every hosted page', async () => {
    const tenant = await svc.addTenant('Acme Marketing');
    const destination = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' }, tenant.auth);
    const source = await newHandoff({ purpose: 'connect_trigger_source' }, tenant.auth);
    for (const url of [destination.url, source.url]) {
      const page = await svc.app.inject({ method: 'GET', url: pathOf(url) });
      expect(page.body).toContain('the cnv account <strong>Acme Marketing</strong>');
    }
  });

  it('refuses a link left unused for more than a day: the page says so (410), nothing is connected, the handoff reads expired', async () => {
    const TOKEN = 'EAABsecretTokenFromEventsManager123';
    const age = (id: string) => svc.db.query(`update handoffs set created_at = now() - interval '25 hours' where id = $1`, [id]);
    const tenant = await svc.addTenant('Expiry');
    const destination = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' }, tenant.auth);
    const source = await newHandoff({ purpose: 'connect_trigger_source' }, tenant.auth);
    await age(destination.id);
    await age(source.id);
    const page = await svc.app.inject({ method: 'GET', url: pathOf(destination.url) });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('This link has expired');
    expect(page.body).not.toContain('<form');
    expect((await submit(destination.url, { pixel_id: '123456789012', access_token: TOKEN })).statusCode).toBe(410);
    expect((await submit(source.url, {})).statusCode).toBe(410);
    expect(await svc.db.query('select id from destinations where account_id = $1', [tenant.accountId])).toEqual([]);
    const polled = await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${destination.id}`, headers: tenant.auth });
    expect(polled.json()).toMatchObject({ id: destination.id, status: 'expired', completed_at: null });
    // A fresh handoff works as before.
    const fresh = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' }, tenant.auth);
    expect((await submit(fresh.url, { pixel_id: '123456789012', access_token: TOKEN })).statusCode).toBe(200);
  });

  it('names the OAuth client secret when the service has the client id but not its secret', async () => {
    const halfSet = await createRestService(kind, { CNV_GOOGLE_OAUTH_CLIENT_ID: 'client-id.apps.example' });
    try {
      const handoff = json<{ url: string }>(
        await halfSet.app.inject({ method: 'POST', url: '/v1/handoffs', headers: halfSet.auth, payload: { purpose: 'connect_destination', destination_type: 'google-ads' } }),
      );
      const res = await halfSet.app.inject({ method: 'GET', url: pathOf(handoff.url) });
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('CNV_GOOGLE_OAUTH_CLIENT_SECRET');
      expect(res.body).not.toContain('Sign in with');
    } finally {
      await halfSet.close();
    }
  });

  describe('connecting the API trigger source', () => {
    it('explains the step on GET and shows no secret before the user confirms', async () => {
      const handoff = await newHandoff({ purpose: 'connect_trigger_source' });
      const page = (await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) })).body;
      expect(page).toContain('Create the webhook secret');
      expect(secretIn(page)).toBeUndefined();
      expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), svc.site.id)).toEqual([]);
      expect((await poll(handoff.id)).status).toBe('pending');
    });

    it('shows the webhook URL and the secret on the page once; the secret is in no API response and no log', async () => {
      const tenant = await svc.addTenant('Backend');
      const handoff = await newHandoff({ purpose: 'connect_trigger_source' }, tenant.auth);
      const res = await submit(handoff.url);
      expect(res.statusCode).toBe(200);
      const secret = secretIn(res.body)!;
      // Whose secret it is, for whoever holds several sites or accounts' pages: the site, its domain and the account.
      expect(res.body).toContain(`The webhook secret of the site <strong>${tenant.site.name}</strong> in the cnv account <strong>Backend</strong>: put it in the backend of this website only.`);
      expect(secret).toBeDefined();
      expect(res.body).toContain(`https://hooks.cnv.test/api/webhook-bridge/saas-signup/${tenant.site.site_key}/{trigger_key}`);
      expect(res.body).toContain('X-Service-Signature');
      expect(res.body).toContain('{timestamp}.POST.{path}.{body}');
      expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), tenant.site.id)).toEqual([secret]);
      // Stored encrypted with the service key: a backup of the store does not hold it in clear.
      const storedSources = await svc.db.query<{ row: string }>('select t::text as row from trigger_sources t');
      expect(storedSources.map((r) => r.row).join('\n')).not.toContain(secret);

      const polled = await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${handoff.id}`, headers: tenant.auth });
      expect(json(polled).status).toBe('completed');
      expect(polled.body).not.toContain(secret);
      const listed = await svc.app.inject({ method: 'GET', url: '/v1/sites', headers: tenant.auth });
      expect(listed.body).not.toContain(secret);
      const stored = await svc.db.query<{ result: unknown }>('select result from handoffs where id = $1', [handoff.id]);
      expect(JSON.stringify(stored)).not.toContain(secret);

      const revisit = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
      expect(revisit.body).not.toContain(secret);
      const resubmit = await submit(handoff.url);
      expect(resubmit.statusCode).toBe(409);
      expect(secretIn(resubmit.body)).toBeUndefined();
      expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), tenant.site.id)).toEqual([secret]);

      expect(logs.length).toBeGreaterThan(0);
      expect(logs.join('\n')).not.toContain(secret);
    });

    it('rotates the secret through a second handoff: the previous one keeps verifying', async () => {
      const tenant = await svc.addTenant('Rotate');
      const first = secretIn((await submit((await newHandoff({ purpose: 'connect_trigger_source' }, tenant.auth)).url)).body)!;
      const page = (await submit((await newHandoff({ purpose: 'connect_trigger_source' }, tenant.auth)).url)).body;
      const second = secretIn(page)!;
      expect(second).not.toBe(first);
      expect(page).toContain('keeps verifying for 24 hours');
      expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), tenant.site.id)).toEqual([second, first]);
      const tomorrow = new Date(Date.now() + 24 * 3600 * 1000 + 1000);
      expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), tenant.site.id, tomorrow)).toEqual([second]);
    });

    it('lets exactly one of two simultaneous completions reveal a secret', async () => {
      const tenant = await svc.addTenant('Race');
      const handoff = await newHandoff({ purpose: 'connect_trigger_source' }, tenant.auth);
      const results = await Promise.all([submit(handoff.url), submit(handoff.url)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      const winner = results.find((r) => r.statusCode === 200)!;
      expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), tenant.site.id)).toEqual([secretIn(winner.body)]);
    });

    it('lists the webhook URLs of the keys the site already uses, a later stage at the webhook of a stage', async () => {
      const tenant = await svc.addTenant('Keys');
      for (const [name, type, key] of [['Signup', 'saas_signup', 'signup-v2'], ['Paid', 'conversion', 'paid']] as const) {
        const created = await svc.app.inject({
          method: 'POST', url: '/v1/flows', headers: tenant.auth,
          payload: {
            site_id: tenant.site.id, name, trigger_config: { type, integrationId: 'api', key },
            actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '42' } } }],
          },
        });
        expect(created.statusCode).toBe(201);
      }
      const handoff = await newHandoff({ purpose: 'connect_trigger_source' }, tenant.auth);
      const page = (await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) })).body;
      const base = 'https://hooks.cnv.test/api/webhook-bridge';
      expect(page).toContain(`${base}/saas-signup/${tenant.site.site_key}/signup-v2`);
      expect(page).toContain(`${base}/conversion/${tenant.site.site_key}/{stage_key}`);
      expect(page).toContain(`${base}/conversion/${tenant.site.site_key}/paid`);
      // A stage key is never offered at the signup webhook, where its reports would match no flow.
      expect(page).not.toContain(`${base}/saas-signup/${tenant.site.site_key}/paid`);
    });
  });

  it('escapes every value it shows', async () => {
    const tenant = await svc.addTenant('Escape');
    const site = await insertSite(svc.db, tenant.accountId, { name: '<img src=x onerror=alert(1)>"&' });
    const handoff = await newHandoff({ purpose: 'connect_trigger_source', site_id: site.id }, tenant.auth);
    const page = (await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) })).body;
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&amp;');
    const destination = await newHandoff({ purpose: 'connect_destination', destination_type: 'meta' }, tenant.auth);
    const bad = await submit(destination.url, { pixel_id: '"><script>alert(1)</script>' });
    expect(bad.body).not.toContain('<script>alert(1)');
    expect(bad.body).toContain('&quot;&gt;&lt;script&gt;');
  });

  it('answers an unknown or malformed token with a 404 HTML page', async () => {
    for (const token of ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'x', '%3Cscript%3E']) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await svc.app.inject({ method, url: `/handoffs/${token}`, ...(method === 'POST' ? { headers: FORM, payload: '' } : {}) });
        expect(res.statusCode).toBe(404);
        expect(res.headers['content-type']).toMatch(/text\/html/);
        expect(res.body).toContain('This link is not valid');
      }
    }
  });
});
