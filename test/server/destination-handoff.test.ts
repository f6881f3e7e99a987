/**
 * Connecting an ad platform through the hosted handoff: Google's OAuth code flow with PKCE (against the fake Google),
 * the account form, sealed credentials, the warning before a connection is replaced, and GET /v1/destinations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService, type Tenant } from './support/rest-harness';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { googleSettings } from './support/google-connection';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const SECRET_KEY = 'a'.repeat(64);

describe.each(DATABASE_KINDS)('connecting a destination through a hosted handoff on $name', (kind) => {
  let svc: RestService;
  let google: FakeGoogle;
  const logs: string[] = [];

  beforeAll(async () => {
    google = await startFakeGoogle();
    svc = await createRestService(
      kind,
      { CNV_SECRET_KEY: SECRET_KEY, ...googleSettings(google) },
      { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
    );
  });
  afterAll(async () => {
    await svc.close();
    await google.close();
  });

  const pathOf = (url: string) => {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  };
  const newHandoff = async (tenant: Tenant, type = 'google-ads') =>
    json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: tenant.auth, payload: { purpose: 'connect_destination', destination_type: type } }));

  /** Follows the sign-in link to Google's (fake) consent screen and back to the service's callback. */
  async function signIn(handoffUrl: string): Promise<string> {
    const start = await svc.app.inject({ method: 'GET', url: `${pathOf(handoffUrl)}/authorize` });
    expect(start.statusCode).toBe(302);
    const authorize = new URL(start.headers.location as string);
    expect(authorize.origin + authorize.pathname).toBe(google.urls.authorize);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('access_type')).toBe('offline');
    expect(authorize.searchParams.get('scope')).toBe('https://www.googleapis.com/auth/datamanager');
    const consent = await fetch(authorize, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const callback = new URL(consent.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe('https://api.cnv.test/handoffs/oauth/callback');
    const back = await svc.app.inject({ method: 'GET', url: callback.pathname + callback.search });
    expect(back.statusCode).toBe(303);
    return back.headers.location as string;
  }

  it('signs in with Google, asks for the customer id, and stores the refresh token sealed, never in any answer', async () => {
    const tenant = await svc.addTenant('Google');
    const handoff = await newHandoff(tenant);
    const first = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(first.body).toContain('Sign in with Google Ads');
    expect(first.body).not.toContain('name="customer_id"');

    const formPage = await signIn(handoff.url);
    expect(formPage).toBe(pathOf(handoff.url));
    const page = await svc.app.inject({ method: 'GET', url: formPage });
    expect(page.body).toContain('name="customer_id"');
    expect(page.body).toContain('Signed in with Google Ads');

    const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=123-456-7890' });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Google Ads is connected to cnv');
    expect(json(await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${handoff.id}`, headers: tenant.auth })).status).toBe('completed');

    const [row] = await svc.db.query<{ settings: Record<string, unknown>; credentials: string; status: string }>(
      'select settings, credentials, status from destinations where account_id = $1',
      [tenant.accountId],
    );
    expect(row!.settings).toEqual({ customer_id: '1234567890', login_customer_id: null, api: 'data_manager' });
    expect(row!.status).toBe('connected');
    expect(row!.credentials).toMatch(/^v1\./); // sealed: AES-256-GCM
    expect(row!.credentials).not.toContain('refresh');

    const listed = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: tenant.auth }));
    expect(listed).toEqual({
      data: [expect.objectContaining({ type: 'google-ads', label: 'Google Ads', status: 'connected', account: row!.settings })],
      has_more: false,
      next_cursor: null,
    });
    const refreshTokens = google.server.requests.filter((r) => r.path === '/token').map((r) => r.answer as { refresh_token?: string });
    const issued = refreshTokens.flatMap((a) => (a.refresh_token ? [a.refresh_token] : []));
    expect(issued.length).toBeGreaterThan(0);
    for (const token of issued) {
      expect(JSON.stringify(listed)).not.toContain(token);
      expect(logs.join('\n')).not.toContain(token);
    }
    // The OAuth code and state never reach a log line either.
    expect(logs.join('\n')).not.toMatch(/code=[A-Za-z0-9]/);
  });

  it('tests a connection through the Data Manager API with validateOnly', async () => {
    const tenant = await svc.addTenant('Test connection');
    const handoff = await newHandoff(tenant);
    await signIn(handoff.url);
    await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=1234567890' });
    const [destination] = json(await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: tenant.auth })).data;
    const tested = await svc.app.inject({
      method: 'POST', url: `/v1/destinations/${destination.id}/test`, headers: tenant.auth, payload: { conversion_id: '987654321' },
    });
    expect(tested.statusCode).toBe(200);
    expect(json(tested)).toMatchObject({ destination: destination.id, ok: true, message: expect.any(String) });
    const validate = google.server.requests.filter((r) => r.path === '/v1/events:ingest').at(-1)!;
    expect(validate.body.validateOnly).toBe(true);
  });

  it('warns before a handoff replaces an existing connection', async () => {
    const tenant = await svc.addTenant('Replace');
    const first = await newHandoff(tenant);
    await signIn(first.url);
    await svc.app.inject({ method: 'POST', url: pathOf(first.url), headers: FORM, payload: 'customer_id=1111111111' });
    const second = await newHandoff(tenant);
    const page = await svc.app.inject({ method: 'GET', url: pathOf(second.url) });
    expect(page.body).toContain('Completing this page replaces it');
  });

  it('says nothing was connected when the user declines on Google, and lets them try again', async () => {
    const tenant = await svc.addTenant('Declined');
    const handoff = await newHandoff(tenant);
    const start = await svc.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize` });
    const state = new URL(start.headers.location as string).searchParams.get('state')!;
    const back = await svc.app.inject({ method: 'GET', url: `/handoffs/oauth/callback?error=access_denied&state=${state}` });
    expect(back.statusCode).toBe(400);
    expect(back.body).toContain('You declined the request');
    expect(back.body).toContain('Sign in with Google Ads');
    expect(await svc.db.query('select 1 from destinations where account_id = $1', [tenant.accountId])).toHaveLength(0);
  });

  it('refuses a callback whose state it did not issue, and a form posted before signing in', async () => {
    const forged = await svc.app.inject({ method: 'GET', url: '/handoffs/oauth/callback?code=abc&state=AAAAAAAAAAAAAAAAAAAAAA' });
    expect(forged.statusCode).toBe(400);
    const tenant = await svc.addTenant('Early form');
    const handoff = await newHandoff(tenant);
    const early = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=1234567890' });
    expect(early.statusCode).toBe(400);
    expect(early.body).toContain('Sign in with Google Ads first');
    expect(await svc.db.query('select 1 from destinations where account_id = $1', [tenant.accountId])).toHaveLength(0);
  });

  it('connects Meta with a pasted system-user token, sealed, without an OAuth step', async () => {
    const tenant = await svc.addTenant('Meta');
    const handoff = await newHandoff(tenant, 'meta');
    const page = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(page.body).toContain('name="pixel_id"');
    const done = await svc.app.inject({
      method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'pixel_id=1234567890123456&access_token=EAABsecretTokenFromEventsManager123',
    });
    expect(done.statusCode).toBe(200);
    const [row] = await svc.db.query<{ settings: Record<string, unknown>; credentials: string }>(
      'select settings, credentials from destinations where account_id = $1', [tenant.accountId],
    );
    expect(JSON.stringify(row!.settings)).not.toContain('EAAB');
    expect(row!.credentials).not.toContain('EAAB');
    expect(done.body).not.toContain('EAAB');
  });
});
