/**
 * Connecting an ad platform through the hosted handoff: Google's OAuth code flow with PKCE (against the fake Google),
 * the account form, sealed credentials, the warning before a connection is replaced, and GET /v1/destinations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService, type Tenant } from './support/rest-harness';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { googleSettings } from './support/google-connection';
import { cookieHeaderFrom } from './support/browser-cookies';
import { secretBox } from '../../src/server/db/secret-box';
import { buildApp } from '../../src/server/app';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const DATA_MANAGER = 'https://www.googleapis.com/auth/datamanager';
const ADWORDS = 'https://www.googleapis.com/auth/adwords';
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
  async function signIn(handoffUrl: string, choices = '', scope = DATA_MANAGER): Promise<string> {
    const start = await svc.app.inject({ method: 'GET', url: `${pathOf(handoffUrl)}/authorize${choices}` });
    expect(start.statusCode).toBe(302);
    const authorize = new URL(start.headers.location as string);
    expect(authorize.origin + authorize.pathname).toBe(google.urls.authorize);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('access_type')).toBe('offline');
    expect(authorize.searchParams.get('scope')).toBe(scope);
    const consent = await fetch(authorize, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const callback = new URL(consent.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe('https://api.cnv.test/handoffs/oauth/callback');
    const back = await svc.app.inject({ method: 'GET', url: callback.pathname + callback.search, headers: { cookie: cookieHeaderFrom(start.headers['set-cookie']) } });
    expect(back.statusCode).toBe(303);
    return back.headers.location as string;
  }

  it('a sign-in sealed under another CNV_SECRET_KEY (a restart with a new key midway) asks to sign in again: no 500, nothing stored', async () => {
    const otherBox = secretBox(Buffer.from('c'.repeat(64), 'hex'));
    const tenant = await svc.addTenant('Key changed');
    // Finished sign-in, then the key changes before the form is sent.
    const handoff = await newHandoff(tenant);
    await signIn(handoff.url);
    await svc.db.query('update handoffs set oauth_grant = $2 where id = $1', [handoff.id, otherBox.seal(JSON.stringify({ refresh_token: 'r' }))]);
    // The page offers the sign-in again (it is no longer signed in), and a submitted form says why.
    const reopened = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(reopened.body).toContain(`action="${new URL(handoff.url).pathname}/authorize"`);
    expect(reopened.body).not.toContain('Signed in with Google Ads');
    const form = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=123-456-7890' });
    expect(form.statusCode).toBe(400);
    expect(form.body).toContain('sign in with Google Ads again');
    expect(form.body).toContain(`action="${new URL(handoff.url).pathname}/authorize"`);
    // A sign-in started, then the key changes before the platform sends the browser back.
    const second = await newHandoff(tenant);
    const start = await svc.app.inject({ method: 'GET', url: `${pathOf(second.url)}/authorize` });
    await svc.db.query('update handoffs set oauth_verifier = $2 where id = $1', [second.id, otherBox.seal('verifier')]);
    const consent = await fetch(new URL(start.headers.location as string), { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location')!);
    const back = await svc.app.inject({ method: 'GET', url: callback.pathname + callback.search, headers: { cookie: cookieHeaderFrom(start.headers['set-cookie']) } });
    expect(back.statusCode).toBeLessThan(500);
    const after = await svc.app.inject({ method: 'GET', url: back.headers.location ? String(back.headers.location) : pathOf(second.url) });
    expect(`${back.body}${after.body}`).toContain('started before the service');
    expect(await svc.db.query('select id from destinations where account_id = $1', [tenant.accountId])).toEqual([]);
  });

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

  it('asks Google for the Google Ads API scope when that API is chosen before the sign-in, and keeps the scope granted', async () => {
    const tenant = await svc.addTenant('Legacy API');
    const handoff = await newHandoff(tenant);
    const first = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(first.body).toContain(`<form method="get" action="${new URL(handoff.url).pathname}/authorize">`);
    expect(first.body).toContain('<select id="api" name="api"');
    // The form is answered with a redirect to Google's consent screen, which the page's form-action must allow.
    expect(first.headers['content-security-policy']).toContain(`form-action 'self' ${new URL(google.urls.authorize).origin};`);
    // A value the choice does not take is refused on the page; no sign-in starts.
    const authorizeCalls = google.server.requests.length;
    const bogus = await svc.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize?api=bogus` });
    expect(bogus.statusCode).toBe(400);
    expect(bogus.body).toContain('Choose one of the listed values for &quot;Send through&quot;');
    expect(bogus.headers['set-cookie']).toBeUndefined();
    // Sent twice, it is no one value: refused the same way.
    expect((await svc.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize?api=data_manager&api=google_ads_api` })).statusCode).toBe(400);

    await signIn(handoff.url, '?api=google_ads_api', `${DATA_MANAGER} ${ADWORDS}`);
    expect(google.server.requests.length).toBeGreaterThan(authorizeCalls);
    const page = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(page.body).toContain('Send through: <strong>Google Ads API (legacy)</strong>, chosen before signing in.');
    expect(page.body).not.toContain('name="api"');
    // The choice made before the sign-in wins over a form that says otherwise.
    const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=123-456-7890&api=data_manager' });
    expect(done.statusCode).toBe(200);
    const [row] = await svc.db.query<{ settings: Record<string, unknown>; credentials: string }>('select settings, credentials from destinations where account_id = $1', [tenant.accountId]);
    expect(row!.settings).toMatchObject({ api: 'google_ads_api' });
    const opened = JSON.parse(secretBox(Buffer.from(SECRET_KEY, 'hex')).open(row!.credentials)) as Record<string, string>;
    expect(opened.oauth_granted_scope).toBe(`${DATA_MANAGER} ${ADWORDS}`);
    // The OAuth client the grant was issued to goes with it (a later refusal to another client is the grant's).
    expect(opened.oauth_client_id).toBe(google.client.id);

    // A reconnect starts at the API the connection sends through: a plain sign-in link keeps it, scope included.
    const reconnect = await newHandoff(tenant);
    const reconnectPage = await svc.app.inject({ method: 'GET', url: pathOf(reconnect.url) });
    expect(reconnectPage.body).toContain('<option value="google_ads_api" selected>');
    await signIn(reconnect.url, '', `${DATA_MANAGER} ${ADWORDS}`);
  });

  it('a sign-in that did not cover the Google Ads API cannot connect through it: the sign-in page says what to do', async () => {
    const tenant = await svc.addTenant('Uncovered API');
    const handoff = await newHandoff(tenant);
    await signIn(handoff.url);
    // A sign-in from before the choice was asked first: the form still offers the API.
    await svc.db.query('update handoffs set oauth_choices = null where id = $1', [handoff.id]);
    const page = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(page.body).toContain('name="api"');
    const refused = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=123-456-7890&api=google_ads_api' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Google did not give cnv access to the Google Ads API');
    expect(refused.body).toContain(ADWORDS);
    expect(refused.body).toContain(`action="${new URL(handoff.url).pathname}/authorize"`);
    expect(await svc.db.query('select id from destinations where account_id = $1', [tenant.accountId])).toEqual([]);
    // Signed in with the Data Manager scope, the Data Manager API connects.
    const [choice] = await svc.db.query<{ oauth_choices: unknown }>('select oauth_choices from handoffs where id = $1', [handoff.id]);
    expect(choice!.oauth_choices).toBeNull();
    const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=123-456-7890&api=data_manager' });
    expect(done.statusCode).toBe(200);
  });

  it('the sign-in page can be shown again after a sign-in, with the choice made, to change it', async () => {
    const tenant = await svc.addTenant('Change API');
    const handoff = await newHandoff(tenant);
    await signIn(handoff.url, '?api=data_manager');
    const form = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(form.body).toContain(`href="${new URL(handoff.url).pathname}?sign_in=again"`);
    const again = await svc.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}?sign_in=again` });
    expect(again.body).toContain('<option value="data_manager" selected>');
    expect(again.body).toContain(`action="${new URL(handoff.url).pathname}/authorize"`);
    await signIn(handoff.url, '?api=google_ads_api', `${DATA_MANAGER} ${ADWORDS}`);
    const changed = await svc.app.inject({ method: 'GET', url: pathOf(handoff.url) });
    expect(changed.body).toContain('Send through: <strong>Google Ads API (legacy)</strong>');
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
    const back = await svc.app.inject({
      method: 'GET', url: `/handoffs/oauth/callback?error=access_denied&state=${state}`, headers: { cookie: cookieHeaderFrom(start.headers['set-cookie']) },
    });
    expect(back.statusCode).toBe(400);
    expect(back.body).toContain('You declined the request');
    expect(back.body).toContain('Sign in with Google Ads');
    expect(await svc.db.query('select 1 from destinations where account_id = $1', [tenant.accountId])).toHaveLength(0);
  });

  it("says the service's setup is at fault when Google refuses its OAuth client at the callback, and the link works once it is fixed", async () => {
    const tenant = await svc.addTenant('Client refused');
    const handoff = await newHandoff(tenant);
    // The same store served by a service whose client secret Google no longer takes (rotated at Google).
    const stale = await buildApp({ db: svc.db, settings: { ...svc.settings, google: { ...svc.settings.google, oauthClientSecret: 'rotated-away-secret' } }, logger: false });
    await stale.ready();
    try {
      const start = await stale.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize` });
      const consent = await fetch(new URL(start.headers.location as string), { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location')!);
      const back = await stale.inject({ method: 'GET', url: callback.pathname + callback.search, headers: { cookie: cookieHeaderFrom(start.headers['set-cookie']) } });
      expect(back.statusCode).toBe(503);
      expect(back.body).toContain("This cnv service's setup is at fault, not your sign-in.");
      expect(back.body).toContain('signing in again will not help');
      expect(back.body).toContain('<code>CNV_GOOGLE_OAUTH_CLIENT_SECRET</code>');
      expect(back.body).toContain('This link keeps working');
      expect(back.body).not.toContain('try again');
      expect(back.body).not.toContain('rotated-away-secret');
      expect(await svc.db.query('select 1 from destinations where account_id = $1', [tenant.accountId])).toHaveLength(0);
    } finally {
      await stale.close();
    }
    // The operator fixes the secret (the service with the right one): the same link signs in and connects.
    expect(await signIn(handoff.url)).toBe(pathOf(handoff.url));
    const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=123-456-7890' });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Google Ads is connected to cnv');
  });

  it("keeps the newest handoff's grant: an older link's late sign-in or form is told it was superseded and changes nothing", async () => {
    const tenant = await svc.addTenant('Two links');
    const credentials = async () => (await svc.db.query<{ credentials: string }>('select credentials from destinations where account_id = $1', [tenant.accountId]))[0]?.credentials;
    const older = await newHandoff(tenant);
    const olderSignedIn = await newHandoff(tenant);
    const newer = await newHandoff(tenant);
    // The older links' sign-ins: one started (its callback comes last), one finished (its form is sent last).
    const start = await svc.app.inject({ method: 'GET', url: `${pathOf(older.url)}/authorize` });
    await signIn(olderSignedIn.url);
    // The newest link is signed in and completed in between.
    await signIn(newer.url);
    const done = await svc.app.inject({ method: 'POST', url: pathOf(newer.url), headers: FORM, payload: 'customer_id=123-456-7890' });
    expect(done.statusCode).toBe(200);
    const newest = await credentials();
    // An older link opened now says so at once, rather than after a sign-in at Google that could change nothing.
    const googleCalls = google.server.requests.length;
    const opened = await svc.app.inject({ method: 'GET', url: pathOf(olderSignedIn.url) });
    expect(opened.statusCode).toBe(409);
    expect(opened.body).toContain('A newer connect link for Google Ads was completed after this one was created');
    expect(opened.body).not.toContain('/authorize');
    const authorize = await svc.app.inject({ method: 'GET', url: `${pathOf(older.url)}/authorize` });
    expect(authorize.statusCode).toBe(409);
    expect(authorize.headers.location).toBeUndefined();
    expect(google.server.requests.length).toBe(googleCalls);

    // The older sign-in comes back now: not kept, and the page says why.
    const consent = await fetch(new URL(start.headers.location as string), { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location')!);
    const late = await svc.app.inject({ method: 'GET', url: callback.pathname + callback.search, headers: { cookie: cookieHeaderFrom(start.headers['set-cookie']) } });
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain('A newer connect link for Google Ads was completed after this one was created');
    // The other older link's form, sent last.
    const lateForm = await svc.app.inject({ method: 'POST', url: pathOf(olderSignedIn.url), headers: FORM, payload: 'customer_id=999-999-9999' });
    expect(lateForm.statusCode).toBe(409);
    expect(lateForm.body).toContain('nothing was changed here');
    expect(await credentials()).toBe(newest);
    const [row] = await svc.db.query<{ settings: Record<string, unknown> }>('select settings from destinations where account_id = $1', [tenant.accountId]);
    expect(row!.settings).toMatchObject({ customer_id: '1234567890' });
    expect(json(await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${olderSignedIn.id}`, headers: tenant.auth })).status).toBe('pending');
    // A link created after the completed one still replaces it, as any reconnect does.
    const next = await newHandoff(tenant);
    await signIn(next.url);
    const replaced = await svc.app.inject({ method: 'POST', url: pathOf(next.url), headers: FORM, payload: 'customer_id=999-999-9999' });
    expect(replaced.statusCode).toBe(200);
    expect(await credentials()).not.toBe(newest);
  });

  it('refuses a callback whose state it did not issue, and a form posted before signing in', async () => {
    // A state it did not issue cannot come with its cookie either: refused before any lookup.
    const forged = await svc.app.inject({ method: 'GET', url: '/handoffs/oauth/callback?code=abc&state=AAAAAAAAAAAAAAAAAAAAAA' });
    expect(forged.statusCode).toBe(403);
    expect((await svc.app.inject({ method: 'GET', url: '/handoffs/oauth/callback?code=abc&state=short' })).statusCode).toBe(400);
    const tenant = await svc.addTenant('Early form');
    const handoff = await newHandoff(tenant);
    const early = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=1234567890' });
    expect(early.statusCode).toBe(400);
    expect(early.body).toContain('Sign in with Google Ads first');
    expect(await svc.db.query('select 1 from destinations where account_id = $1', [tenant.accountId])).toHaveLength(0);
  });

  /** The platform's consent (the fake consents at once) for an authorize redirect: the callback path it sends the browser to. */
  async function consentFor(start: { headers: Record<string, unknown> }): Promise<string> {
    const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location')!);
    return callback.pathname + callback.search;
  }
  const grantOf = async (handoffId: string) =>
    (await svc.db.query<{ oauth_grant: string | null }>('select oauth_grant from handoffs where id = $1', [handoffId]))[0]!.oauth_grant;

  it("binds the sign-in to the browser that started it: a consent link opened elsewhere stores nothing on the starter's handoff", async () => {
    // The attacker starts the sign-in on their own handoff without a browser, and sends the consent URL to a victim.
    const attacker = await svc.addTenant('Attacker');
    const handoff = await newHandoff(attacker);
    const start = await svc.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize` });
    expect(start.statusCode).toBe(302);
    const setCookie = String(start.headers['set-cookie']);
    expect(setCookie).toMatch(/^cnv_handoff_oauth_[A-Za-z0-9]{12}=\d+\.[0-9a-f]{64}; /);
    expect(setCookie).toContain('Path=/handoffs; HttpOnly; SameSite=Lax; Max-Age=3600; Secure');
    const state = new URL(start.headers.location as string).searchParams.get('state')!;
    expect(setCookie).not.toContain(state);

    // The victim's browser (signed in at the platform) comes back with a code, but without the cookie.
    const callback = await consentFor(start);
    const victim = await svc.app.inject({ method: 'GET', url: callback });
    expect(victim.statusCode).toBe(403);
    expect(victim.body).toContain('This sign-in was not started in this browser');
    expect(victim.body).not.toContain(pathOf(handoff.url)); // names no handoff, offers no sign-in to it
    expect(victim.body).not.toContain('Sign in with');
    expect(victim.headers['set-cookie']).toBeUndefined();
    expect(await grantOf(handoff.id)).toBeNull();
    const tokenCalls = google.server.requests.filter((r) => r.path === '/token').length;

    // A cookie of another sign-in, or a forged one, does not do either.
    const other = await svc.app.inject({ method: 'GET', url: `${pathOf((await newHandoff(attacker)).url)}/authorize` });
    const wrongName = cookieHeaderFrom(other.headers['set-cookie']);
    const renamed = `${cookieHeaderFrom(start.headers['set-cookie']).split('=')[0]}=${wrongName.split('=')[1]}`;
    const forgedValue = cookieHeaderFrom(start.headers['set-cookie']).replace(/[0-9a-f]{64}$/, '0'.repeat(64));
    for (const cookie of [wrongName, renamed, forgedValue]) {
      const refused = await svc.app.inject({ method: 'GET', url: callback, headers: { cookie } });
      expect(refused.statusCode).toBe(403);
    }
    expect(google.server.requests.filter((r) => r.path === '/token')).toHaveLength(tokenCalls); // no code was exchanged
    expect(await grantOf(handoff.id)).toBeNull();

    // With only the handoff link, the attacker cannot complete it.
    const form = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=1234567890' });
    expect(form.statusCode).toBe(400);
    expect(form.body).toContain('Sign in with Google Ads first');
    expect(await svc.db.query('select 1 from destinations where account_id = $1', [attacker.accountId])).toHaveLength(0);
  });

  it('lets the browser that started a refused-elsewhere sign-in still finish it, and clears its cookie when used', async () => {
    const tenant = await svc.addTenant('Own browser');
    const handoff = await newHandoff(tenant);
    const start = await svc.app.inject({ method: 'GET', url: `${pathOf(handoff.url)}/authorize` });
    const callback = await consentFor(start);
    expect((await svc.app.inject({ method: 'GET', url: callback })).statusCode).toBe(403); // opened elsewhere first
    const cookie = cookieHeaderFrom(start.headers['set-cookie']);
    const back = await svc.app.inject({ method: 'GET', url: callback, headers: { cookie } });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe(pathOf(handoff.url));
    expect(String(back.headers['set-cookie'])).toMatch(new RegExp(`^${cookie.split('=')[0]}=; Path=/handoffs; HttpOnly; SameSite=Lax; Max-Age=0`));
    expect(await grantOf(handoff.id)).not.toBeNull();
    // The state is spent: the same callback again, even with the cookie, stores nothing more.
    expect((await svc.app.inject({ method: 'GET', url: callback, headers: { cookie } })).statusCode).toBe(400);
  });

  it('keeps sign-ins of two handoffs started in two tabs of one browser apart; both complete', async () => {
    const tenant = await svc.addTenant('Two tabs');
    const first = await newHandoff(tenant);
    const second = await newHandoff(tenant, 'google-ads');
    const startFirst = await svc.app.inject({ method: 'GET', url: `${pathOf(first.url)}/authorize` });
    const startSecond = await svc.app.inject({ method: 'GET', url: `${pathOf(second.url)}/authorize` });
    // The browser holds both cookies and sends both on each callback.
    const jar = [cookieHeaderFrom(startFirst.headers['set-cookie']), cookieHeaderFrom(startSecond.headers['set-cookie'])].join('; ');
    expect(jar.split('; ').map((c) => c.split('=')[0])).toHaveLength(2);
    const backSecond = await svc.app.inject({ method: 'GET', url: await consentFor(startSecond), headers: { cookie: jar } });
    const backFirst = await svc.app.inject({ method: 'GET', url: await consentFor(startFirst), headers: { cookie: jar } });
    expect([backFirst.statusCode, backFirst.headers.location]).toEqual([303, pathOf(first.url)]);
    expect([backSecond.statusCode, backSecond.headers.location]).toEqual([303, pathOf(second.url)]);
    expect(await grantOf(first.id)).not.toBeNull();
    expect(await grantOf(second.id)).not.toBeNull();
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

  it('completes a sign-in the previous release (238e677) recorded: its grant names no OAuth client, and neither does the connection', async () => {
    // An upgrade between a person's sign-in and their form: the grant is sealed in that release's shape.
    const tenant = await svc.addTenant('Signed in before the upgrade');
    const handoff = await newHandoff(tenant);
    await signIn(handoff.url);
    const refreshToken = google.issueRefreshToken(DATA_MANAGER);
    const box = secretBox(Buffer.from(SECRET_KEY, 'hex'));
    await svc.db.query('update handoffs set oauth_grant = $2 where id = $1', [
      handoff.id,
      box.seal(JSON.stringify({ refresh_token: refreshToken, oauth_granted_scope: DATA_MANAGER })),
    ]);
    const done = await svc.app.inject({ method: 'POST', url: pathOf(handoff.url), headers: FORM, payload: 'customer_id=123-456-7890' });
    expect(done.statusCode).toBe(200);
    const [row] = await svc.db.query<{ credentials: string; status: string }>('select credentials, status from destinations where account_id = $1', [tenant.accountId]);
    expect(row!.status).toBe('connected');
    const opened = JSON.parse(box.open(row!.credentials)) as Record<string, string>;
    expect(opened).toMatchObject({ refresh_token: refreshToken, oauth_granted_scope: DATA_MANAGER });
    // As a connection made before the upgrade: a later refusal of the client cannot be told to be another client's.
    expect(opened).not.toHaveProperty('oauth_client_id');
  });
});
