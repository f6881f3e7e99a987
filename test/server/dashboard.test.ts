/** The dashboard in process: sign-in links, sessions, CSRF, the account's data only, and what each page shows and does. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createTestService, type TestService } from './support/harness';
import { erasuresView, platformsElsewhere } from '../../src/server/dashboard/views';
import { attentionSection } from '../../src/server/dashboard/pages/overview';
import { currentValue } from '../../src/server/dashboard/pages/events';
import { currentValueOf } from '../../src/server/api/events/events';
import { ATTENTION_COUNT_CAP } from '../../src/server/dashboard/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { insertApiFlow } from './support/fixtures';
import { loadSettings } from '../../src/server/settings';
import { createTenant } from './support/rest-harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { signIn, SECURE_SESSION_COOKIE, SESSION_COOKIE, SIGN_IN_TTL_MS } from '../../src/server/dashboard/sessions';
import { upsertDestination } from '../../src/server/destinations/sql';
import { activeWebhookSecrets } from '../../src/server/webhook/secret-sql';
import { newId } from '../../src/server/db/ids';
import { signedReport } from './support/fixtures';
import type { Queryable } from '../../src/server/db/db';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { formToken, pressSignIn } from './support/dashboard-sign-in';

// One store and app for the file (a fresh PGlite is a load of about a second); each test gets an account, key and site
// of its own in it, and every page and query of the dashboard is scoped to the signed-in account.
let shared: TestService;
let svc: TestService;
beforeAll(async () => {
  shared = await createTestService({ CNV_PUBLIC_URL: 'http://cnv.test' });
});
afterAll(async () => {
  await shared.close();
});
beforeEach(async () => {
  svc = { ...shared, ...(await createTenant(shared.db, 'Test account')) };
});

/** A browser of one account: its session cookie and the CSRF token of its pages. */
interface Browser {
  cookie: string;
  csrf: string;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, form: Record<string, string>, withCsrf?: boolean): Promise<LightMyRequestResponse>;
}

/** A page's text with the HTML escapes of quotes, ampersands and angle brackets read back. */
function decodeEntities(text: string): string {
  return text.replace(/&#39;|&#x27;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

async function signedIn(accountId = svc.accountId): Promise<Browser> {
  const link = await issueSignInLink(svc.db, svc.settings, accountId);
  const res = await pressSignIn(svc.app, link.url);
  expect(res.statusCode).toBe(303);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  const page = await svc.app.inject({ method: 'GET', url: '/', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const browser: Browser = {
    cookie,
    csrf,
    get: (url) => svc.app.inject({ method: 'GET', url, headers: { cookie } }),
    post: (url, form, withCsrf = true) =>
      svc.app.inject({
        method: 'POST',
        url,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(withCsrf ? { ...form, _csrf: csrf } : form).toString(),
      }),
  };
  return browser;
}

/** Inserts an event with one action; it happened `agoSeconds` ago (events of one account need distinct times). */
let insertedEvents = 0;
async function insertEvent(db: Queryable, site: { id: string; site_key: string; account_id: string }, action: { status: string; error?: unknown; request?: unknown }, agoSeconds = 0) {
  const id = newId('evt');
  // sort_at is unique per account, and PGlite's now() can repeat between two quick statements: each event is a
  // microsecond apart.
  await db.query(
    `insert into events (id, account_id, site_id, site_key, flow_name, trigger, occurred_at, sort_at, status, match_quality, email, click_ids, data)
     values ($1, $2, $3, $4, 'Signups', 'saas_signup', now() - make_interval(secs => $7), now() - make_interval(secs => $7) + make_interval(secs => $8 / 1e6), $5, 'high', 'ada@example.com', '{"gclid":"TeSt-gclid"}', $6)`,
    [id, site.account_id, site.id, site.site_key, action.status === 'delivered' ? 'completed' : action.status,
      JSON.stringify({ match_reason: 'paired', correlation_token: 'tok_abc', utm: { utm_source: 'google' }, landing_page_url: 'https://www.example.com/?gclid=TeSt-gclid', customer_event_id: 'user-1' }), agoSeconds, ++insertedEvents],
  );
  await db.query(
    `insert into event_actions (id, event_id, position, destination, conversion_id, status, attempts, error, request)
     values ($1, $2, 0, 'google-ads', '987654321', $3, 1, $4, $5)`,
    [newId('act'), id, action.status, action.error ? JSON.stringify(action.error) : null, action.request ? JSON.stringify(action.request) : null],
  );
  return id;
}

describe('signing in', () => {
  it('opening a sign-in link (GET or HEAD) spends nothing and sets no cookie: it shows whose dashboard, and a button', async () => {
    const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
    expect(link.url).toMatch(/^http:\/\/cnv\.test\/dashboard\/sign-in\?token=[A-Za-z0-9]{32}$/);
    const path = link.url.slice('http://cnv.test'.length);
    const token = new URL(link.url).searchParams.get('token')!;
    // A link previewer or mail scanner: HEAD, then GET, again and again.
    for (const method of ['HEAD', 'GET', 'HEAD', 'GET'] as const) {
      const opened = await svc.app.inject({ method, url: path });
      expect(opened.statusCode, method).toBe(200);
      expect(opened.headers['set-cookie'], method).toBeUndefined();
      expect(opened.headers['referrer-policy'], method).toBe('same-origin');
      expect(opened.headers['cache-control'], method).toBe('no-store');
      expect(String(opened.headers['content-security-policy']), method).toContain("form-action 'self'");
    }
    const page = await svc.app.inject({ method: 'GET', url: path });
    expect(page.body).toContain('Sign in to the cnv dashboard of the account <strong>Test account</strong>.');
    expect(page.body).toContain(`<time datetime="${link.expiresAt.toISOString()}">`);
    expect(page.body).not.toContain('Switch to another account?');
    // The form posts to the bare path (no token in its address), the token in a hidden field.
    expect(page.body).toContain(`<form method="post" action="/dashboard/sign-in"><input type="hidden" name="token" value="${token}"><button type="submit">Sign in</button></form>`);
    expect(formToken(page.body)).toBe(token);
    const [stored] = await svc.db.query<{ used_at: Date | null }>('select used_at from dashboard_sign_in_tokens where account_id = $1', [svc.accountId]);
    expect(stored!.used_at).toBeNull();
    expect(await svc.db.query('select 1 from dashboard_sessions where account_id = $1', [svc.accountId])).toHaveLength(0);
  });

  it('over HTTPS the session cookie is a __Host- cookie, and a plain cookie of the same name opens nothing there', async () => {
    // Behind the TLS proxy of production (X-Forwarded-Proto, trusted): the browser reached the dashboard over https.
    const https = { 'x-forwarded-proto': 'https' };
    const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
    const url = new URL(link.url);
    const opened = await svc.app.inject({ method: 'GET', url: url.pathname + url.search, headers: https });
    const pressed = await svc.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: { ...https, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: new URLSearchParams({ token: formToken(opened.body)! }).toString(),
    });
    expect(pressed.statusCode).toBe(303);
    const setCookie = String(pressed.headers['set-cookie']);
    // What a browser requires of the prefix: Secure, Path=/, no Domain.
    expect(setCookie).toMatch(new RegExp(`^${SECURE_SESSION_COOKIE}=[A-Za-z0-9]+; Path=/; HttpOnly; SameSite=Lax; Max-Age=\\d+; Secure$`));
    const token = setCookie.split(';')[0]!.split('=')[1]!;
    const page = (cookie: string, headers: Record<string, string> = https) => svc.app.inject({ method: 'GET', url: '/', headers: { ...headers, cookie } });
    expect((await page(`${SECURE_SESSION_COOKIE}=${token}`)).statusCode).toBe(200);
    // The unprefixed name can be set by a sibling subdomain or a plain-http page: over https it is not read.
    expect((await page(`${SESSION_COOKIE}=${token}`)).statusCode).toBe(401);
    // Signing out clears the same prefixed cookie.
    const signedInPage = await page(`${SECURE_SESSION_COOKIE}=${token}`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(signedInPage.body)![1]!;
    const out = await svc.app.inject({
      method: 'POST',
      url: '/dashboard/sign-out',
      headers: { ...https, cookie: `${SECURE_SESSION_COOKIE}=${token}`, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toBe(`${SECURE_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure`);
    expect((await page(`${SECURE_SESSION_COOKIE}=${token}`)).statusCode).toBe(401);
  });

  it('the button spends the link once, sets an HttpOnly SameSite=Lax cookie, and opens the account\'s dashboard', async () => {
    const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
    const first = await pressSignIn(svc.app, link.url);
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe('/');
    expect(first.headers['cache-control']).toBe('no-store');
    const cookie = String(first.headers['set-cookie']);
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9]+; Path=/; HttpOnly; SameSite=Lax; Max-Age=\\d+$`));
    expect((await svc.app.inject({ method: 'GET', url: '/', headers: { cookie: cookie.split(';')[0]! } })).statusCode).toBe(200);
    const path = link.url.slice('http://cnv.test'.length);
    for (const method of ['GET', 'HEAD'] as const) {
      const again = await svc.app.inject({ method, url: path });
      expect(again.statusCode, method).toBe(410);
      expect(again.headers['set-cookie'], method).toBeUndefined();
    }
    expect((await svc.app.inject({ method: 'GET', url: path })).body).toContain('already used');
    const token = new URL(link.url).searchParams.get('token')!;
    const post = (headers: Record<string, string>) =>
      svc.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: `token=${token}` });
    const reposted = await post({ 'sec-fetch-site': 'same-origin' });
    expect(reposted.statusCode).toBe(410);
    expect(reposted.headers['set-cookie']).toBeUndefined();
  });

  it('refuses a sign-in post another site makes (login CSRF with a link of its own), and signs nobody in', async () => {
    const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
    const token = new URL(link.url).searchParams.get('token')!;
    for (const site of ['cross-site', 'same-site', 'none']) {
      const res = await svc.app.inject({
        method: 'POST', url: '/dashboard/sign-in',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': site }, payload: `token=${token}`,
      });
      expect(res.statusCode, site).toBe(403);
      expect(res.headers['set-cookie'], site).toBeUndefined();
    }
    // The link is still unused: its own page signs in.
    expect((await pressSignIn(svc.app, link.url)).statusCode).toBe(303);
  });

  it('refuses a sign-in post another site makes from a browser that sends no fetch metadata, by its Origin', async () => {
    // Safari before 16.4 and older Firefox send no Sec-Fetch-Site, but they send Origin on a form post: another site's
    // page (its own origin, or "null" under its own no-referrer policy) must not sign the visitor in with its link.
    const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
    const token = new URL(link.url).searchParams.get('token')!;
    const post = (headers: Record<string, string>) =>
      svc.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: `token=${token}` });
    for (const origin of ['https://evil.example', 'null', 'http://cnv.test.evil.example', 'http://cnv.test:8080', 'https://cnv.test']) {
      const res = await post({ origin });
      expect(res.statusCode, origin).toBe(403);
      expect(res.headers['set-cookie'], origin).toBeUndefined();
      expect(res.body, origin).toContain('was not sent from the sign-in page of this dashboard');
    }
    // The sign-in page sends its own origin with its post (its referrer policy keeps its address, with the token, to
    // this service alone); so does a page reached under the address the request names.
    const page = await svc.app.inject({ method: 'GET', url: `/dashboard/sign-in?token=${token}` });
    expect(page.headers['referrer-policy']).toBe('same-origin');
    expect((await post({ origin: 'http://cnv.test' })).statusCode).toBe(303);
    const again = await issueSignInLink(svc.db, svc.settings, svc.accountId);
    const other = await svc.app.inject({
      method: 'POST', url: '/dashboard/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded', host: '127.0.0.1:8787', origin: 'http://127.0.0.1:8787' },
      payload: `token=${new URL(again.url).searchParams.get('token')}`,
    });
    expect(other.statusCode).toBe(303);
  });

  it('takes HTML forms only: a JSON body (numbers, lists, nulls where a form has text) is 415 on every form, never a 500, and changes nothing', async () => {
    const browser = await signedIn();
    const sitesBefore = await svc.db.query('select id, name, domain, timezone from sites order by id');
    const cases: Array<[string, Record<string, unknown>]> = [
      ['/dashboard/sites', { domain: 123 }],
      ['/dashboard/sites', { domain: null }],
      [`/dashboard/sites/${svc.site.id}`, { timezone: { x: 1 } }],
      ['/dashboard/flows', { name: 'a', trigger: 'api', key: ['x'] }],
      ['/dashboard/notifications', { url: 123 }],
      ['/dashboard/privacy/preview', { email: ['a@b.c'] }],
      ['/dashboard/privacy/erase', { email: ['a@b.c'] }],
      ['/dashboard/keys', { label: { a: 1 } }],
    ];
    for (const [url, fields] of cases) {
      const res = await svc.app.inject({
        method: 'POST', url, headers: { cookie: browser.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ _csrf: browser.csrf, ...fields }),
      });
      expect([url, res.statusCode, res.headers['content-type']], JSON.stringify(fields)).toEqual([url, 415, 'text/html; charset=utf-8']);
    }
    expect(await svc.db.query('select id, name, domain, timezone from sites order by id')).toEqual(sitesBefore);
  });

  it("asks before a link of another account replaces this browser's session, and switches only on the session's own form", async () => {
    const browser = await signedIn();
    const other = await createTenant(svc.db, 'Someone else');
    const link = new URL((await issueSignInLink(svc.db, svc.settings, other.accountId)).url);
    const asked = await browser.get(link.pathname + link.search);
    expect(asked.statusCode).toBe(200);
    expect(asked.headers['set-cookie']).toBeUndefined();
    expect(asked.body).toContain('Switch to another account?');
    expect(asked.body).toContain('Someone else');
    expect(asked.body).toContain('Stay in Test account');
    // Nothing changed: the session is still the first account's, and the link still unused.
    expect((await browser.get('/')).statusCode).toBe(200);
    const token = link.searchParams.get('token')!;
    expect((await browser.post('/dashboard/sign-in', { token }, false)).statusCode).toBe(403);
    const switched = await browser.post('/dashboard/sign-in', { token });
    expect(switched.statusCode).toBe(303);
    expect(String(switched.headers['set-cookie'])).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9]+;`));
    // The session switched away from is ended on the server too: its cookie opens nothing any more; the new one opens
    // the other account.
    const newCookie = String(switched.headers['set-cookie']).split(';')[0]!;
    expect((await svc.app.inject({ method: 'GET', url: '/', headers: { cookie: browser.cookie } })).statusCode).toBe(401);
    const reopened = await svc.app.inject({ method: 'GET', url: '/', headers: { cookie: newCookie } });
    expect(reopened.statusCode).toBe(200);
    expect(reopened.body).toContain('Someone else');
    // A link of the same account shows the plain sign-in page, with the way back to the dashboard.
    const own = new URL((await issueSignInLink(svc.db, svc.settings, svc.accountId)).url);
    const same = await browser.get(own.pathname + own.search);
    expect(same.statusCode).toBe(200);
    expect(same.body).toContain('Sign in to the cnv dashboard of the account');
    expect(same.body).not.toContain('Switch to another account?');
  });

  it('refuses an expired link and an unknown one', async () => {
    const issuedAt = new Date(Date.now() - SIGN_IN_TTL_MS - 1000);
    const link = await issueSignInLink(svc.db, svc.settings, svc.accountId, issuedAt);
    const token = new URL(link.url).searchParams.get('token')!;
    expect(await signIn(svc.db, token)).toEqual({ ok: false, reason: 'expired' });
    const res = await svc.app.inject({ method: 'GET', url: `/dashboard/sign-in?token=${token}` });
    expect(res.statusCode).toBe(410);
    expect(res.body).toContain('expired');
    const unknown = await svc.app.inject({ method: 'GET', url: '/dashboard/sign-in?token=nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('npx cnv dashboard');
  });

  it('stores sign-in tokens and sessions only as hashes', async () => {
    const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
    const token = new URL(link.url).searchParams.get('token')!;
    const browser = await signedIn();
    const session = browser.cookie.split('=')[1]!;
    const rows = JSON.stringify([
      ...(await svc.db.query('select * from dashboard_sign_in_tokens where account_id = $1', [svc.accountId])),
      ...(await svc.db.query('select * from dashboard_sessions where account_id = $1', [svc.accountId])),
    ]);
    expect(rows).not.toContain(token);
    expect(rows).not.toContain(session);
  });

  it('marks the cookie Secure when the service is on https', async () => {
    const https = await createTestService({ CNV_PUBLIC_URL: 'https://cnv.example' });
    try {
      const link = await issueSignInLink(https.db, https.settings, https.accountId);
      const res = await pressSignIn(https.app, link.url);
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure$/);
    } finally {
      await https.close();
    }
  });

  it('answers every page without a session with the sign-in help, and serves nothing of the account', async () => {
    for (const url of ['/', '/dashboard/sites', '/dashboard/setup/checklist', `/dashboard/sites/${svc.site.id}/install-check`, '/dashboard/destinations/list', '/dashboard/flows', '/dashboard/events', '/dashboard/keys', '/dashboard/destinations']) {
      const res = await svc.app.inject({ method: 'GET', url, headers: { cookie: `${SESSION_COOKIE}=forged0000000000000000` } });
      expect(res.statusCode, url).toBe(401);
      expect(res.body).toContain('npx cnv dashboard');
      expect(res.body).not.toContain(svc.site.site_key);
    }
  });

  it('signs out: the session cookie no longer opens anything', async () => {
    const browser = await signedIn();
    const out = await browser.post('/dashboard/sign-out', {});
    // Post, then redirect: a reload of the page it lands on sends nothing again.
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/dashboard/signed-out');
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    const landed = await svc.app.inject({ method: 'GET', url: '/dashboard/signed-out' });
    expect(landed.statusCode).toBe(200);
    expect(landed.body).toContain('You are signed out.');
    expect((await browser.get('/')).statusCode).toBe(401);
  });
});

describe('forms', () => {
  it('refuses a post without the CSRF token, or with another session\'s, and changes nothing', async () => {
    const browser = await signedIn();
    const other = await signedIn();
    const res = await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Hijacked' }, false);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('CSRF');
    const forged = await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Hijacked', _csrf: other.csrf }, false);
    expect(forged.statusCode).toBe(403);
    const [site] = await svc.db.query<{ name: string }>('select name from sites where id = $1', [svc.site.id]);
    expect(site!.name).toBe('My Website');
  });

  it("treats another account's ids as not found", async () => {
    const other = await createTenant(svc.db, 'Other');
    const otherEvent = await insertEvent(svc.db, other.site, { status: 'delivered' });
    const browser = await signedIn();
    expect((await browser.post(`/dashboard/sites/${other.site.id}`, { name: 'Mine now' })).statusCode).toBe(404);
    expect((await browser.get(`/dashboard/events/${otherEvent}`)).statusCode).toBe(404);
    const [otherKey] = await svc.db.query<{ id: string }>('select id from api_keys where account_id = $1', [other.accountId]);
    expect((await browser.post(`/dashboard/keys/${otherKey!.id}/revoke`, {})).statusCode).toBe(404);
    expect((await browser.post(`/dashboard/sites/${other.site.id}/webhook-secret`, {})).statusCode).toBe(404);
    expect((await browser.get(`/dashboard/sites/${other.site.id}/install-check`)).statusCode).toBe(404);
    expect((await browser.get(`/dashboard/sites/${other.site.id}/webhook-secret/revoke-previous`)).statusCode).toBe(404);
    expect((await browser.post(`/dashboard/sites/${other.site.id}/webhook-secret/revoke-previous`, {})).statusCode).toBe(404);
    const page = await browser.get('/dashboard/sites');
    expect(page.body).toContain(svc.site.site_key);
    expect(page.body).not.toContain(other.site.site_key);
  });
});

describe('the setup checklist', () => {
  const doneSteps = (page: string) => [...page.matchAll(/<li class="done" id="step-([a-z]+)">/g)].map((m) => m[1]);

  it('ticks each step from the account\'s real state, links each to its place, and stops refreshing when complete', async () => {
    const browser = await signedIn();
    const first = (await browser.get('/')).body;
    expect(first).toContain('Welcome to cnv');
    expect(first).toContain('0 of 7 steps done');
    expect(first).toMatch(/<li class="current" id="step-domain">[\s\S]*?<a class="go button" href="\/dashboard\/sites#site_/);
    expect(first).toContain(`data-live="/dashboard/setup/checklist" data-live-every="3">`);

    await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Shop', domain: 'https://www.example.com', timezone: 'UTC' });
    expect(doneSteps((await browser.get('/dashboard/setup/checklist')).body)).toEqual(['domain']);
    // A page of the site loads the loader: once the collector's counts are written, the install step ticks itself.
    await svc.app.inject({ method: 'GET', url: `/collect/v1/sites/${svc.site.site_key}/config`, headers: { origin: 'https://www.example.com' } });
    await new Promise((r) => setTimeout(r, 2_300));
    expect(doneSteps((await browser.get('/dashboard/setup/checklist')).body)).toEqual(['domain', 'install']);

    await upsertDestination(svc.db, svc.accountId, 'google-ads', { customer_id: '1234567890' });
    await browser.post(`/dashboard/sites/${svc.site.id}/webhook-secret`, {});
    await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Signups', trigger_type: 'api', key: 'signup', 'action_google-ads': 'on', 'value_google-ads': '987654321' });
    const checklist = (await browser.get('/dashboard/setup/checklist')).body;
    expect(doneSteps(checklist)).toEqual(['domain', 'install', 'destination', 'backend', 'flow']);
    expect(checklist).toContain('Connected: Google Ads.');
    expect(checklist).toMatch(/<li class="current" id="step-publish">[\s\S]*?href="\/dashboard\/flows#flow_/);

    const [flow] = await svc.db.query<{ id: string }>('select id from flows where account_id = $1', [svc.accountId]);
    expect((await browser.post(`/dashboard/flows/${flow!.id}/publish`, {})).statusCode).toBe(303);
    expect(doneSteps((await browser.get('/dashboard/setup/checklist')).body)).toHaveLength(6);
    const failed = await insertEvent(svc.db, { ...svc.site, account_id: svc.accountId }, { status: 'failed' });
    expect(doneSteps((await browser.get('/dashboard/setup/checklist')).body)).toHaveLength(6);
    const delivered = await insertEvent(svc.db, { ...svc.site, account_id: svc.accountId }, { status: 'delivered' });
    const complete = (await browser.get('/dashboard/setup/checklist')).body;
    expect(doneSteps(complete)).toHaveLength(7);
    expect(complete).toContain('data-live-done');
    expect(complete).toContain(`href="/dashboard/events/${delivered}"`);
    expect(complete).not.toContain(failed);
    expect((await browser.get('/')).body).toContain('Setup complete');
  });
});

describe('the Sites page', () => {
  it('shows the snippet and its tag-manager variant, and saves name, domain and timezone', async () => {
    const browser = await signedIn();
    const page = await browser.get('/dashboard/sites');
    expect(page.body).toContain(`&lt;script async src=&quot;http://cnv.test/loader.js?site_key=${svc.site.site_key}&quot;&gt;&lt;/script&gt;`);
    expect(page.body).toContain(`loader.js?site_key=${svc.site.site_key}`);
    const saved = await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Shop', domain: 'https://www.example.com', timezone: 'Europe/Paris' });
    expect(saved.statusCode).toBe(303);
    const [site] = await svc.db.query('select name, domain, timezone from sites where id = $1', [svc.site.id]);
    expect(site).toEqual({ name: 'Shop', domain: 'https://www.example.com', timezone: 'Europe/Paris' });
    expect((await browser.get(saved.headers.location as string)).body).toContain('Site saved.');
  });

  it('refuses a site or flow name with a control character (a line break, an escape sequence), changing nothing', async () => {
    const browser = await signedIn();
    const rows = async () => JSON.stringify(await svc.db.query('select (select count(*)::int from sites) as sites, (select count(*)::int from flows) as flows, (select name from sites where id = $1) as name', [svc.site.id]));
    const before = await rows();
    const added = await browser.post('/dashboard/sites', { name: 'Shop\r\nInjected' });
    expect(added.statusCode).toBe(400);
    expect(added.body).toContain('one line of text');
    const saved = await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Shop\u001b]0;owned\u0007', timezone: 'UTC' });
    expect(saved.statusCode).toBe(400);
    const flow = await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Signups\u009b2J', trigger_type: 'api', key: 'signup', 'action_google-ads': 'on', 'value_google-ads': '987654321' });
    expect(flow.statusCode).toBe(400);
    expect(await rows()).toBe(before);
  });

  it('adds a site, and shows a refused one in the Add site form with its reason and the values typed', async () => {
    const browser = await signedIn();
    const bad = await browser.post('/dashboard/sites', { name: 'Second shop', domain: 'https://shop.example.com/path' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('<h1>Sites</h1>');
    expect(bad.body).toMatch(/id="add-site">\s*<h2>Add a site<\/h2>\s*<div class="notice bad" role="alert"/);
    expect(bad.body).toContain('value="Second shop"');
    expect(bad.body).toMatch(/value="https:\/\/shop\.example\.com\/path"[^>]*aria-invalid="true"/);
    // In the form's words: its field's label, not the API's parameter; above the form, a link to the field.
    expect(bad.body).toMatch(/role="alert"[^>]*><a href="#new-site-domain">Domain must not contain a path/);
    const badKey = await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Signups', trigger_type: 'api', key: 'not a key!', 'action_google-ads': 'on', 'value_google-ads': '987654321' });
    expect(badKey.statusCode).toBe(400);
    expect(badKey.body).toContain('Trigger key: ');
    expect(badKey.body).not.toContain("'trigger_config.key'");
    expect(badKey.body).toMatch(/id="flow-key"[^>]*aria-invalid="true"/);
    // A platform's setting: the field's label, not the config's path.
    const noId = await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Signups', trigger_type: 'api', key: 'signup', 'action_google-ads': 'on', 'value_google-ads': '' });
    expect(noId.statusCode).toBe(400);
    expect(noId.body).toContain('Google Ads: Conversion action id is missing');
    expect(noId.body).not.toMatch(/Conversion\.id/i);

    // Several mistakes at once: each one said and marked, not only the first.
    const several = await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Signups', trigger_type: 'api', key: 'bad key!', 'action_google-ads': 'on', 'value_google-ads': '' });
    expect(several.statusCode).toBe(400);
    expect(several.body).toContain('2 fields need a change:');
    expect(several.body).toMatch(/id="flow-key"[^>]*aria-invalid="true"/);
    expect(several.body).toContain('href="#flow-google-ads"');
    expect(several.body).toContain('Google Ads: Conversion action id is missing');
    const formTrigger = await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Leads', trigger_type: 'form', integration: 'html', page_filter: 'not a path' });
    expect(formTrigger.statusCode).toBe(400);
    expect(formTrigger.body).toContain('Tick at least one destination');
    expect(formTrigger.body).toMatch(/id="flow-pages"[^>]*aria-invalid="true"/);
    expect(formTrigger.body).toContain('Pages: ');

    const unnamed = await browser.post('/dashboard/sites', { name: ' ', domain: '' });
    expect(unnamed.statusCode).toBe(400);
    expect(unnamed.body).toContain('Give the site a name');
    expect(await svc.db.query('select id from sites where account_id = $1', [svc.accountId])).toHaveLength(1);
    const added = await browser.post('/dashboard/sites', { name: 'Second shop', domain: 'https://shop.example.com' });
    expect(added.statusCode).toBe(303);
    expect(await svc.db.query('select id from sites where account_id = $1', [svc.accountId])).toHaveLength(2);
  });

  it('pages on past the first 100 sites: every site is reachable, added, saved, checked, and its flow shown with its webhook', async () => {
    // An agency's account with many sites (the first made with the account): 102 more, the last with a draft flow.
    const sites = [];
    for (let i = 1; i <= 102; i++) sites.push(await insertSite(svc.db, svc.accountId, { name: `Client site ${i}`, domain: `https://c${i}.example.com` }));
    const last = sites[101]!;
    await insertApiFlow(svc.db, last, { triggerKey: 'signup', name: 'Last site signups', status: 'draft' });
    const browser = await signedIn();

    const first = await browser.get('/dashboard/sites');
    expect(first.statusCode).toBe(200);
    expect(first.body.match(/<section class="card" id="site_/g)).toHaveLength(100);
    expect(first.body).toContain('Client site 99<');
    expect(first.body).not.toContain('Client site 100<');
    const next = /href="(\/dashboard\/sites\?starting_after=[^"]+)">Next sites/.exec(first.body)?.[1];
    expect(next).toBe(`/dashboard/sites?starting_after=${sites[98]!.id}`);
    const second = await browser.get(next!);
    expect(second.statusCode).toBe(200);
    expect(second.body).toContain('Client site 100<');
    expect(second.body).toContain('Client site 102<');
    expect(second.body).not.toContain('Client site 99<');
    expect(second.body).not.toContain('Next sites');
    expect(second.body).toContain('href="/dashboard/sites">First sites');
    // Its events: the Events page's filter shows the site chosen though its list holds the first 100, and so does the chart.
    expect(second.body).toContain(`<a href="/dashboard/events?site_id=${last.id}">Events of this site</a>`);
    const events = await browser.get(`/dashboard/events?site_id=${last.id}`);
    expect(events.statusCode).toBe(200);
    expect(events.body).toMatch(new RegExp(`<option value="${last.id}" selected>Client site 102</option>`));
    const allSites = await browser.get('/dashboard/events');
    expect(allSites.body).not.toContain(`<option value="${last.id}"`);
    // A cursor that is not one of the account's sites is the page's 400, never a 500.
    expect((await browser.get('/dashboard/sites?starting_after=site_nothere')).statusCode).toBe(400);

    // The live install check of a site past the first page.
    const check = await browser.get(`/dashboard/sites/${last.id}/install-check`);
    expect(check.statusCode).toBe(200);
    // Saved with a refused domain: its own card says why, on its page.
    const refused = await browser.post(`/dashboard/sites/${last.id}`, { name: 'Client site 102', domain: 'https://c102.example.com/path', timezone: 'UTC' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/value="https:\/\/c102\.example\.com\/path"[^>]*aria-invalid="true"/);
    const saved = await browser.post(`/dashboard/sites/${last.id}`, { name: 'Client site 102', domain: 'https://c102.example.org', timezone: 'UTC' });
    expect(saved.headers.location).toBe(`/dashboard/sites?done=site_saved&starting_after=${sites[100]!.id}#${last.id}`);
    expect((await browser.get(saved.headers.location as string)).body).toContain('value="https://c102.example.org"');
    // A site added after them: the redirect opens the page that shows it.
    const added = await browser.post('/dashboard/sites', { name: 'Landing pages', domain: 'https://offers.example.com' });
    expect(added.statusCode).toBe(303);
    const addedPage = await browser.get(added.headers.location as string);
    expect(addedPage.body).toContain('value="Landing pages"');

    // The Flows page shows the flow of a site past the first page with its site and webhook URL, and says it lists the first sites only.
    const flows = await browser.get('/dashboard/flows');
    expect(flows.statusCode).toBe(200);
    expect(flows.body).toContain('Last site signups');
    expect(flows.body).toContain(`/api/webhook-bridge/saas-signup/${last.site_key}/signup`);
    expect(flows.body).toContain(`id="backend-${last.id}"`);
    expect(decodeEntities(flows.body)).toContain('This account has more sites than this page shows');
    // The way to the sites it leaves out, not to flows (the account has no more flows than the page lists).
    expect(decodeEntities(flows.body)).toContain('<a href="/dashboard/sites">Sites page</a> lists every site');
    expect(decodeEntities(flows.body)).not.toContain('Manage the other flows');
  });

  it('shows why a domain is refused, with the values sent kept in the form', async () => {
    const browser = await signedIn();
    const res = await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Shop', domain: 'https://www.example.com/path', timezone: 'Europe/Paris' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/domain/i);
    expect(res.body).toMatch(/value="https:\/\/www\.example\.com\/path"[^>]*aria-invalid="true"/);
  });

  it('names every wrong field of a refused site form, not only the first, and saves nothing', async () => {
    const browser = await signedIn();
    const res = await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Shop', domain: 'https://www.example.com/path', timezone: 'Mars/Olympus' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('2 fields need a change:');
    expect(res.body).toMatch(new RegExp(`id="${svc.site.id}-domain"[^>]*aria-invalid="true"`));
    expect(res.body).toMatch(new RegExp(`id="${svc.site.id}-timezone"[^>]*aria-invalid="true"`));
    expect(res.body).not.toMatch(new RegExp(`id="${svc.site.id}-name"[^>]*aria-invalid="true"`));
    expect(res.body).toContain(`href="#${svc.site.id}-timezone"`);
    const [site] = await svc.db.query<{ name: string; timezone: string }>('select name, timezone from sites where id = $1', [svc.site.id]);
    expect(site).toEqual({ name: svc.site.name, timezone: svc.site.timezone });
    // Adding a site: no name and a bad domain, both said.
    const added = await browser.post('/dashboard/sites', { name: '', domain: 'https://shop.example.com/path' });
    expect(added.statusCode).toBe(400);
    expect(added.body).toContain('Give the site a name');
    expect(added.body).toMatch(/id="new-site-name"[^>]*aria-invalid="true"/);
    expect(added.body).toMatch(/id="new-site-domain"[^>]*aria-invalid="true"/);
  });

  it("names the account's other site when the refused pages are that site's: its snippet belongs there, not a wider domain", async () => {
    // The brand site's snippet pasted on the app's pages, which the account's App site covers.
    await svc.db.query('update sites set domain = $2 where id = $1', [svc.site.id, 'https://www.example.com']);
    const app = await insertSite(svc.db, svc.accountId, { name: 'App', domain: 'https://app.example.com' });
    // Another account's site covering the shop's refused origin is none of this account's business.
    const other = await createTenant(svc.db, 'Other account');
    await insertSite(svc.db, other.accountId, { name: 'Their shop', domain: 'https://shop.example.com' });
    await svc.db.query(
      `insert into collector_origins (site_id, origin, kind, reason, domain, count) values
         ($1, 'https://app.example.com', 'refused', 'not_covered', 'https://www.example.com', 4),
         ($1, 'https://shop.example.com', 'refused', 'not_covered', 'https://www.example.com', 1)`,
      [svc.site.id],
    );
    const browser = await signedIn();
    const fragment = decodeEntities((await browser.get(`/dashboard/sites/${svc.site.id}/install-check`)).body);
    expect(fragment).toContain(
      'https://app.example.com belongs to your site "App" (its domain https://app.example.com covers it), but these pages carry ' +
        'this site\'s snippet: put the snippet of "App" (Sites page) on them instead. Do not widen this site\'s domain',
    );
    expect(fragment).not.toContain('https://app.example.com is not covered by https://www.example.com: set the domain');
    expect(fragment).toContain('https://shop.example.com is not covered by https://www.example.com: set the domain to https://example.com');
    expect(fragment).not.toContain('Their shop');
    const page = decodeEntities((await browser.get('/dashboard/sites')).body);
    expect(page).toContain('https://app.example.com belongs to your site "App"');
    expect(page).toContain(`id="${app.id}"`);
  });

  it('shows the install check: config requests and snapshots per origin, and refusals with the domain that fixes them', async () => {
    const browser = await signedIn();
    await browser.post(`/dashboard/sites/${svc.site.id}`, { name: 'Shop', domain: 'https://www.example.com', timezone: 'America/New_York' });
    const config = (origin: string) =>
      svc.app.inject({ method: 'GET', url: `/collect/v1/sites/${svc.site.site_key}/config`, headers: { origin } });
    expect((await config('https://www.example.com')).statusCode).toBe(200);
    expect((await config('https://app.example.com')).statusCode).toBe(200);
    const refused = await svc.app.inject({
      method: 'POST', url: `/collect/v1/sites/${svc.site.site_key}/snapshots`, headers: { origin: 'https://app.example.com', 'content-type': 'text/plain' }, payload: '{}',
    });
    expect(refused.statusCode).toBe(403);
    // Before the collector's counts are written, the live install check still waits (and says it updates by itself).
    const waiting = (await browser.get(`/dashboard/sites/${svc.site.id}/install-check`)).body;
    expect(waiting).toMatch(/^<div class="install-check" id="check-[^"]+" data-live="\/dashboard\/sites\/[^"]+\/install-check" data-live-every="3">/);
    expect(waiting).toContain('Waiting for the first page view');
    await new Promise((r) => setTimeout(r, 2_300));
    const fragment = (await browser.get(`/dashboard/sites/${svc.site.id}/install-check`)).body;
    expect(fragment).toContain('data-live-done');
    expect(fragment).toContain('The snippet works');
    expect(fragment).not.toContain('<html');
    const page = (await browser.get('/dashboard/sites')).body;
    expect(page).toContain('<code>https://www.example.com</code>');
    expect(page).toContain('https://app.example.com is not covered by https://www.example.com: set the domain to https://example.com');
    expect(page).toMatch(/set the domain to https:\/\/example\.com\.<\/li>|3×|2×/);
    const [row] = await svc.db.query<{ count: string }>(
      `select sum(count)::text as count from collector_origins where site_id = $1 and kind = 'refused'`, [svc.site.id],
    );
    expect(Number(row!.count)).toBe(2);
  });
});

describe('the Flows page', () => {
  it('with no ad platform connected, says to connect one and offers no Create draft to press', async () => {
    const browser = await signedIn();
    const before = (await browser.get('/dashboard/flows')).body;
    expect(before).toContain('No ad platform is connected yet');
    expect(before).toContain('<button type="submit" disabled>Create draft</button>');
    await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' }, null);
    const after = (await browser.get('/dashboard/flows')).body;
    expect(after).not.toContain('No ad platform is connected yet');
    expect(after).toContain('<button type="submit">Create draft</button>');
  });

  it('creates an API-trigger flow, makes the webhook secret once, publishes, rotates the secret and unpublishes', async () => {
    await upsertDestination(svc.db, svc.accountId, 'google-ads', { customer_id: '1234567890' });
    const browser = await signedIn();
    const created = await browser.post('/dashboard/flows', {
      site_id: svc.site.id, name: 'Signups', trigger_type: 'api', key: 'signup', 'action_google-ads': 'on', 'value_google-ads': '987654321',
    });
    expect(created.statusCode).toBe(303);
    const [flow] = await svc.db.query<{ id: string; status: string; actions_config: unknown }>('select id, status, actions_config from flows where account_id = $1', [svc.accountId]);
    expect(flow!.status).toBe('draft');
    expect(flow!.actions_config).toEqual([{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }]);

    // The draft says what is missing, in the dashboard's words, with the button that fixes it; Publish waits.
    const draft = (await browser.get('/dashboard/flows')).body;
    expect(draft).toContain(`Your backend is not connected to ${svc.site.name} yet`);
    expect(draft).toMatch(new RegExp(`action="/dashboard/sites/${svc.site.id}/webhook-secret"><input type="hidden" name="_csrf" value="[^"]+"><button type="submit" class="small">Create webhook secret`));
    expect(draft).toContain(`<button type="button" disabled aria-describedby="todo-${flow!.id}">Publish</button>`);
    expect(draft).not.toContain('connect_trigger_source');
    const refused = await browser.post(`/dashboard/flows/${flow!.id}/publish`, {});
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('This flow could not go live yet.');

    const secretPage = await browser.post(`/dashboard/sites/${svc.site.id}/webhook-secret`, {});
    const secret = /whsec_[A-Za-z0-9]+/.exec(secretPage.body)![0];
    expect(secretPage.body).toContain('shown only this once');
    expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), svc.site.id)).toEqual([secret]);
    expect((await browser.get('/dashboard/flows')).body).not.toContain(secret);

    expect((await browser.post(`/dashboard/flows/${flow!.id}/publish`, {})).statusCode).toBe(303);
    const flows = (await browser.get('/dashboard/flows')).body;
    expect(flows).toContain(`http://cnv.test/api/webhook-bridge/saas-signup/${svc.site.site_key}/signup`);
    expect(flows).toContain("createCnvClient");
    expect(flows).toContain('Unpublish');

    const rotated = await browser.post(`/dashboard/sites/${svc.site.id}/webhook-secret`, {});
    const next = /whsec_[A-Za-z0-9]+/.exec(rotated.body)![0];
    expect(next).not.toBe(secret);
    expect(rotated.body).toContain('The previous secret keeps verifying until');
    expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), svc.site.id)).toEqual([next, secret]);

    // After a leak: the old secret is revoked at once, after a confirmation page; it no longer verifies, the new one does.
    const signed = (withSecret: string, id: string) =>
      signedReport(svc.site.site_key, 'signup', { customer_event_id: id, correlation_token: null, allow_uncorrelated: true }, withSecret);
    expect((await svc.app.inject(signed(secret, 'before-revoke'))).statusCode).toBe(200);
    expect((await browser.get('/dashboard/flows')).body).toContain(`href="/dashboard/sites/${svc.site.id}/webhook-secret/revoke-previous">Revoke the old secret now</a>`);
    const confirm = await browser.get(`/dashboard/sites/${svc.site.id}/webhook-secret/revoke-previous`);
    expect(confirm.body).toContain('Yes, revoke the old secret now');
    const revoked = await browser.post(`/dashboard/sites/${svc.site.id}/webhook-secret/revoke-previous`, {});
    expect(revoked.headers.location).toBe(`/dashboard/flows?done=old_secret_revoked#backend-${svc.site.id}`);
    expect(await activeWebhookSecrets(svc.db, serviceSecretBox(svc.settings), svc.site.id)).toEqual([next]);
    expect((await svc.app.inject(signed(secret, 'after-revoke'))).statusCode).toBe(401);
    expect((await svc.app.inject(signed(next, 'after-revoke'))).statusCode).toBe(200);
    const after = (await browser.get('/dashboard/flows?done=old_secret_revoked')).body;
    expect(after).toContain('The old webhook secret is revoked');
    expect(after).not.toContain('Revoke the old secret now');
    expect((await browser.post(`/dashboard/sites/${svc.site.id}/webhook-secret/revoke-previous`, {})).headers.location).toContain('done=old_secret_gone');

    expect((await browser.post(`/dashboard/flows/${flow!.id}/unpublish`, {})).statusCode).toBe(303);
    const [unpublished] = await svc.db.query<{ status: string }>('select status from flows where account_id = $1', [svc.accountId]);
    expect(unpublished!.status).toBe('draft');
  });

  it('creates a form-trigger flow and refuses a flow without an action, saying so', async () => {
    await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' });
    const browser = await signedIn();
    const none = await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Leads', trigger_type: 'form', integration: 'hubspot', page_filter: '/contact' });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('Tick at least one destination');
    expect(none.body).toContain('value="Leads"');
    // A page filter the flow could never publish with is refused now (the dashboard cannot edit a flow later).
    const badPages = await browser.post('/dashboard/flows', {
      site_id: svc.site.id, name: 'Leads', trigger_type: 'form', integration: 'hubspot', page_filter: 'signup page', action_meta: 'on', value_meta: '',
    });
    expect(badPages.statusCode).toBe(400);
    expect(badPages.body).toContain('Pages: The page filter');
    expect(badPages.body).toContain('value="signup page"');
    expect(await svc.db.query('select id from flows where account_id = $1', [svc.accountId])).toEqual([]);
    const made = await browser.post('/dashboard/flows', {
      site_id: svc.site.id, name: 'Leads', trigger_type: 'form', integration: 'hubspot', page_filter: '/contact', action_meta: 'on', value_meta: '',
    });
    expect(made.statusCode).toBe(303);
    const [flow] = await svc.db.query<{ trigger_config: unknown; actions_config: unknown }>('select trigger_config, actions_config from flows where account_id = $1', [svc.accountId]);
    expect(flow).toEqual({ trigger_config: { integrationId: 'hubspot', pageFilter: '/contact' }, actions_config: [{ integrationId: 'meta', config: {} }] });
  });
});

describe('the Flows page, flows that count one conversion twice', () => {
  it('warns on each card of two live flows sending the same signups to one Google Ads conversion action, and on a draft that would', async () => {
    const site = await insertSite(svc.db, svc.accountId, { name: 'Doubles' });
    const first = await insertApiFlow(svc.db, site, { triggerKey: 'signup', name: 'Signups A' });
    const second = await insertApiFlow(svc.db, site, { triggerKey: 'signup', name: 'Signups B' });
    const draft = await insertApiFlow(svc.db, site, { triggerKey: 'signup', name: 'Signups C', status: 'draft' });
    const apart = await insertApiFlow(svc.db, site, { triggerKey: 'signup', name: 'Signups D', actions: [{ integrationId: 'google-ads', config: { conversion: { id: '555' } } }] });
    const body = decodeEntities((await (await signedIn()).get('/dashboard/flows')).body);
    const card = (id: string) => new RegExp(`<section class="card" id="${id}"[\\s\\S]*?</section>`).exec(body)![0];
    expect(card(first)).toContain("This flow and the live flow 'Signups B' both send each conversion");
    expect(card(first)).toContain(`<a href="#${second}">Go to Signups B</a>`);
    expect(card(second)).toContain("This flow and the live flow 'Signups A'");
    expect(card(first)).toContain('Google Ads conversion action 123456789');
    expect(card(draft)).toContain("Once published, this flow and the live flows 'Signups A' and 'Signups B' would all send each conversion to Google Ads conversion action 123456789, as three conversions");
    expect(card(draft).match(/Counted twice/g)).toHaveLength(1);
    expect(card(draft)).toContain(`<a href="#${first}">Go to Signups A</a> · <a href="#${second}">Go to Signups B</a>`);
    expect(card(apart)).not.toContain('Counted twice');
    expect(card(first)).toContain('Counted twice in Google Ads.');
    // A draft is never named as the other flow: it sends nothing.
    expect(card(first)).not.toContain('Signups C');
  });
});

describe('the Destinations page', () => {
  it('opens a connect_destination handoff and redirects to its hosted page; lists connections with their status', async () => {
    const browser = await signedIn();
    const res = await browser.post('/dashboard/destinations/connect', { destination_type: 'meta' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/^http:\/\/cnv\.test\/handoffs\/[A-Za-z0-9]+$/);
    const [handoff] = await svc.db.query<{ purpose: string; account_id: string }>('select purpose, account_id from handoffs');
    expect(handoff).toEqual({ purpose: 'connect_destination', account_id: svc.accountId });
    const row = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' });
    await svc.db.query(`update destinations set status = 'reauthorization_required' where id = $1`, [row.id]);
    const page = (await browser.get('/dashboard/destinations')).body;
    expect(page).toContain('reauthorization required');
    expect(page).toContain('1234567890123456');
    expect(page).toContain('Connect Google Ads');
    expect(page).not.toContain('Not the real platforms'); // this service talks to the platforms themselves
  });

  it("gives a later stage's flow the client snippet that reports a stage (reportConversion), a signup's reportSignup", async () => {
    const site = await insertSite(svc.db, svc.accountId, { name: 'Stages' });
    await insertApiFlow(svc.db, site, { triggerKey: 'paid_plan', triggerType: 'conversion' });
    await insertApiFlow(svc.db, site, { triggerKey: 'signup_key' });
    const body = decodeEntities((await (await signedIn()).get('/dashboard/flows')).body);
    expect(body).toContain("await cnv.reportConversion('paid_plan', { customerEventId: invoice.id, customerId: customer.id");
    expect(body).toContain("triggerKey: 'signup_key',");
    expect(body.match(/await cnv\.reportSignup\(/g)?.length).toBeGreaterThanOrEqual(1);
    expect(body).not.toContain("triggerKey: 'paid_plan'");
    // The stage's snippet names the site's own signup key, never a made-up one.
    expect(body).toContain("triggerKey: 'signup_key', // the key of your signup flow's trigger");
    expect(body).not.toContain("triggerKey: 'signup',");
    const lone = await insertSite(svc.db, svc.accountId, { name: 'Stage only' });
    await insertApiFlow(svc.db, lone, { triggerKey: 'renewal', triggerType: 'conversion' });
    const withLone = decodeEntities((await (await signedIn()).get('/dashboard/flows')).body);
    expect(withLone).toContain("triggerKey: '…', // the key of your signup flow's trigger (this site has none yet)");
  });

  it('answers an address under /dashboard that is no page with a dashboard page that says so, never the API\'s JSON', async () => {
    const browser = await signedIn();
    // A form's address opened again (a reload, a bookmark) is served with POST only: 405 with Allow, the same page.
    for (const [url, status] of [['/dashboard/nowhere', 404], [`/dashboard/sites/${svc.site.id}/webhook-secret`, 405], ['/dashboard/destinations/connect', 405]] as const) {
      const res = await browser.get(url);
      expect(res.statusCode, url).toBe(status);
      expect(res.headers.allow, url).toBe(status === 405 ? 'POST' : undefined);
      expect(res.headers['content-type'], url).toMatch(/text\/html/);
      expect(res.body, url).toContain('Not found');
      expect(res.body, url).toContain('pick the page from the menu');
      expect(res.body, url).toContain('href="/dashboard/events"'); // the menu: signed in
    }
    // A page's address posted to: 405 naming GET, a dashboard page that says what to do.
    const posted = await svc.app.inject({ method: 'POST', url: '/dashboard/events', payload: {} });
    expect([posted.statusCode, posted.headers.allow]).toEqual([405, 'GET, HEAD']);
    expect(posted.headers['content-type']).toMatch(/text\/html/);
    expect(posted.body).toContain('reload the page it is on and send it again');
    // Whatever body it carries: a form's bad encoding, broken JSON, another type, none at all.
    for (const [type, payload] of [
      ['application/x-www-form-urlencoded', 'a=%zz'], ['application/json', '{"a":'], ['application/json', ''], ['text/csv', 'a,b'],
    ] as const) {
      for (const [url, status] of [['/dashboard/events', 405], ['/dashboard/nowhere', 404]] as const) {
        const res = await svc.app.inject({ method: 'POST', url, payload, headers: { 'content-type': type } });
        expect([res.statusCode, res.headers['content-type']], `${url} ${type} ${payload}`).toEqual([status, expect.stringMatching(/text\/html/)]);
        expect(res.body, `${url} ${type} ${payload}`).toContain('reload the page it is on and send it again');
      }
    }
    const anonymous = await svc.app.inject({ method: 'GET', url: '/dashboard/nowhere' });
    expect(anonymous.statusCode).toBe(404);
    expect(anonymous.headers['content-type']).toMatch(/text\/html/);
    expect(anonymous.body).not.toContain('href="/dashboard/events"');
    // Outside the dashboard, the API's envelope as before.
    expect((await svc.app.inject({ method: 'GET', url: '/v1/nowhere' })).json().error.code).toBe('route_not_found');
  });

  it('warns on the Destinations page when the platforms\' calls go elsewhere (the demo\'s fakes), naming each', () => {
    expect(platformsElsewhere(loadSettings({}))).toBeNull();
    const notice = platformsElsewhere(loadSettings({ CNV_META_GRAPH_API_BASE: 'http://127.0.0.1:9', CNV_TIKTOK_API_BASE: 'http://127.0.0.1:10/' }));
    expect(notice?.kind).toBe('warn');
    const text = String(notice?.text);
    expect(text).toContain('Meta to <code>http://127.0.0.1:9</code>, TikTok to <code>http://127.0.0.1:10</code>');
    expect(text).not.toContain('Google Ads');
    expect(text).toContain('CNV_DEMO_PORT=off');
  });
});

describe('the Events page', () => {
  it('lists events with their destinations, filters by status, and traces one with the failure hint in plain words', async () => {
    const site = { ...svc.site };
    const delivered = await insertEvent(svc.db, site, { status: 'delivered', request: { conversion_action: '987654321', click_id: 'gclid', diagnostics: { state: 'success', message: 'All events processed.' } } });
    const failed = await insertEvent(svc.db, site, {
      status: 'failed', error: { code: 'click_too_old', message: 'The click is older than the conversion window.', hint: 'Raise the click-through window of the conversion action.', status: 400 },
    });
    const browser = await signedIn();
    const list = (await browser.get('/dashboard/events')).body;
    expect(list).toContain(`/dashboard/events/${delivered}`);
    expect(list).toContain(`/dashboard/events/${failed}`);
    expect(list).toContain('<svg');
    const onlyFailed = (await browser.get('/dashboard/events?status=failed')).body;
    expect(onlyFailed).toContain(failed);
    expect(onlyFailed).not.toContain(`/dashboard/events/${delivered}"`);
    const trace = (await browser.get(`/dashboard/events/${failed}`)).body;
    expect(trace).toContain('TeSt-gclid');
    expect(trace).toContain('tok_abc');
    expect(trace).toContain('utm_source');
    expect(trace).toContain('Raise the click-through window of the conversion action.');
    const ok = (await browser.get(`/dashboard/events/${delivered}`)).body;
    expect(ok).toContain('All events processed.');
    expect(ok).toContain('987654321');
  });

  it('lists exactly the erased conversions under the status choice "erased", whatever their delivery status', async () => {
    const site = { ...svc.site };
    const erase = (id: string) => svc.db.query(`update events set erased_at = now(), email = null, data = data || '{"erased": true}' where id = $1`, [id]);
    const erasedSent = await insertEvent(svc.db, site, { status: 'delivered' }, 30);
    const erasedStopped = await insertEvent(svc.db, site, { status: 'failed', error: { code: 'erased', message: 'Not sent: erased.' } }, 40);
    await erase(erasedSent);
    await erase(erasedStopped);
    const failed = await insertEvent(svc.db, site, { status: 'failed', error: { code: 'click_too_old', message: 'Too old.' } }, 50);
    const delivered = await insertEvent(svc.db, site, { status: 'delivered' }, 60);
    const browser = await signedIn();
    const all = (await browser.get('/dashboard/events')).body;
    expect(all).toContain('<option value="erased">erased</option>');
    const erased = (await browser.get('/dashboard/events?status=erased')).body;
    expect(erased).toContain('<option value="erased" selected>erased</option>');
    expect(erased).not.toContain('role="alert"');
    const listed = [...erased.matchAll(/<td data-label="Occurred"><a href="\/dashboard\/events\/(evt_[A-Za-z0-9_]+)"/g)].map((m) => m[1]);
    expect(listed).toContain(erasedSent);
    expect(listed).toContain(erasedStopped);
    expect(listed).not.toContain(failed);
    expect(listed).not.toContain(delivered);
    const rows = listed.map((id) => svc.db.query<{ erased: boolean }>('select erased_at is not null as erased from events where id = $1', [id]));
    expect((await Promise.all(rows)).every(([row]) => row?.erased === true)).toBe(true);
    // The failed choice still leaves the erased out: each event is listed under the status its badge shows.
    const onlyFailed = (await browser.get('/dashboard/events?status=failed')).body;
    expect(onlyFailed).toContain(`/dashboard/events/${failed}"`);
    expect(onlyFailed).not.toContain(`/dashboard/events/${erasedStopped}"`);
  });

  it('shows a refused filter as the page\'s error, never a 500', async () => {
    const browser = await signedIn();
    const res = await browser.get('/dashboard/events?starting_after=yesterday');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('starting_after');
    // A refusal names the fields as the page labels them.
    const dates = await browser.get('/dashboard/events?from=2026-11-20&to=2026-11-10');
    expect(dates.statusCode).toBe(400);
    expect(dates.body).toContain('From must not be later than To.');
    expect(dates.body).not.toContain('occurred_after');
    expect(dates.body).toContain('Searches the last 90 days');
    // The field it is about is marked, and no list claims that nothing matched a search that never ran.
    expect(dates.body).toMatch(/id="f-from" name="from" value="2026-11-20" aria-invalid="true" aria-errormessage="filter-error"/);
    expect(dates.body).not.toMatch(/id="f-to"[^>]*aria-invalid/);
    expect(dates.body).not.toContain('No events match');
    // A status the page does not offer: the page's four choices, erased included, not the API's three.
    const status = await browser.get('/dashboard/events?status=bogus');
    expect(status.statusCode).toBe(400);
    expect(status.body).toContain('Status must be one of queued, completed, failed, erased. Nothing was searched');
    expect(status.body).toMatch(/id="f-status" name="status"[^>]*aria-invalid="true"/);
  });

  it("says how many reports of a burst wait for their events, and says nothing when none waits", async () => {
    const browser = await signedIn();
    expect((await browser.get('/dashboard/events')).body).not.toContain('awaiting-events');
    // Two reports a burst stored first (webhook/deferred-fanout.ts): their events are not built yet.
    for (const ceid of ['burst-1', 'burst-2']) {
      const id = newId('rpt');
      await svc.db.query(
        `insert into reports (id, site_id, customer_event_id, trigger_key) values ($1, $2, $3, 'signup')`,
        [id, svc.site.id, ceid],
      );
      await svc.db.query('insert into report_fanouts (report_id, received_at) values ($1, now())', [id]);
    }
    const page = (await browser.get('/dashboard/events')).body;
    expect(page).toContain('id="awaiting-events"');
    expect(page).toContain('2 reports received in a burst are stored and answered; their events are being built');
    // Another account sees none of them.
    const other = await createTenant(svc.db, 'other');
    expect((await (await signedIn(other.accountId)).get('/dashboard/events')).body).not.toContain('awaiting-events');
  });
});

describe('the API keys page', () => {
  it('refuses a label with a control character (an escape sequence for the terminal of whoever lists keys), making no key', async () => {
    const browser = await signedIn();
    const count = async () => (await svc.db.query<{ n: number }>('select count(*)::int as n from api_keys where account_id = $1', [svc.accountId]))[0]!.n;
    const before = await count();
    const res = await browser.post('/dashboard/keys', { label: 'ci\u001b]0;owned\u0007' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('The label must be one line of text, without control characters.');
    expect(await count()).toBe(before);
  });

  it('refuses a label ending in a line break or a tab, as REST refuses such a name, instead of trimming it away', async () => {
    const browser = await signedIn();
    const count = async () => (await svc.db.query<{ n: number }>('select count(*)::int as n from api_keys where account_id = $1', [svc.accountId]))[0]!.n;
    const before = await count();
    for (const label of ['backend\n', 'backend\t', '\r\nbackend']) {
      const res = await browser.post('/dashboard/keys', { label });
      expect(res.statusCode, JSON.stringify(label)).toBe(400);
      expect(res.body).toContain('The label must be one line of text, without control characters.');
    }
    expect(await count()).toBe(before);
    // Spaces around a label are still trimmed, as REST trims a name.
    expect((await browser.post('/dashboard/keys', { label: '  spaced label  ' })).statusCode).toBe(200);
    const labels = await svc.db.query<{ label: string }>(`select label from api_keys where account_id = $1 and label like '%spaced label%'`, [svc.accountId]);
    expect(labels).toEqual([{ label: 'spaced label' }]);
  });

  it('creates a key shown once that works on the REST API, lists it by its first characters with its last use, and revokes it', async () => {
    const browser = await signedIn();
    const res = await browser.post('/dashboard/keys', { label: 'backend' });
    const key = /cnv_sk_[A-Za-z0-9]{32}/.exec(res.body)![0];
    const rowOf = () => /<tr id="key_[^"]+"><td data-label="Key"><code class="nowrap">([^<]+)<\/code>[\s\S]*?<\/tr>/g;
    const keyRow = (page: string) => [...page.matchAll(rowOf())].find((m) => m[1] === `${key.slice(0, 12)}…`)![0];
    expect(keyRow((await browser.get('/dashboard/keys')).body)).toMatch(/data-label="Last used"><span class="muted">never<\/span>/);
    expect((await svc.app.inject({ method: 'GET', url: '/v1/sites', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    const list = (await browser.get('/dashboard/keys')).body;
    expect(list).not.toContain(key);
    expect(list).toContain(`${key.slice(0, 12)}…`);
    expect(keyRow(list)).not.toContain('never');
    // Written once a minute at most: a second request within the minute leaves the time as it was.
    const [used] = await svc.db.query<{ last_used_at: Date }>(`select last_used_at from api_keys where label = 'backend' and account_id = $1`, [svc.accountId]);
    expect(used!.last_used_at).toBeInstanceOf(Date);
    await svc.db.query(`update api_keys set last_used_at = now() - interval '30 seconds' where label = 'backend' and account_id = $1`, [svc.accountId]);
    const [pinned] = await svc.db.query<{ last_used_at: Date }>(`select last_used_at from api_keys where label = 'backend' and account_id = $1`, [svc.accountId]);
    expect((await svc.app.inject({ method: 'GET', url: '/v1/sites', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    const [same] = await svc.db.query<{ last_used_at: Date }>(`select last_used_at from api_keys where label = 'backend' and account_id = $1`, [svc.accountId]);
    expect(same!.last_used_at.getTime()).toBe(pinned!.last_used_at.getTime());
    await svc.db.query(`update api_keys set last_used_at = now() - interval '2 minutes' where label = 'backend' and account_id = $1`, [svc.accountId]);
    expect((await svc.app.inject({ method: 'GET', url: '/v1/sites', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    const [again] = await svc.db.query<{ last_used_at: Date }>(`select last_used_at from api_keys where label = 'backend' and account_id = $1`, [svc.accountId]);
    expect(again!.last_used_at.getTime()).toBeGreaterThan(pinned!.last_used_at.getTime());
    const [row] = await svc.db.query<{ id: string }>(`select id from api_keys where label = 'backend' and account_id = $1`, [svc.accountId]);
    expect((await browser.post(`/dashboard/keys/${row!.id}/revoke`, {})).statusCode).toBe(303);
    expect((await svc.app.inject({ method: 'GET', url: '/v1/sites', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(401);
  });
});

describe("a flow's card", () => {
  it('says when one of its platforms waits for a new authorization, with the way to reconnect', async () => {
    const browser = await signedIn();
    const row = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' });
    expect((await browser.post('/dashboard/flows', { site_id: svc.site.id, name: 'Meta leads', trigger_type: 'api', key: 'meta-leads', action_meta: 'on', value_meta: '' })).statusCode).toBe(303);
    expect((await browser.get('/dashboard/flows')).body).not.toContain('refused cnv&#39;s authorization');
    await svc.db.query(`update destinations set status = 'reauthorization_required' where id = $1`, [row.id]);
    const page = (await browser.get('/dashboard/flows')).body;
    expect(page).toMatch(/Meta refused cnv(&#39;|')s authorization: once published, this flow(&#39;|')s conversions for it wait \(nothing is lost\)/);
    expect(page).toContain('<a href="/dashboard/destinations">reconnect it on Destinations</a>');
    await svc.db.query(`update destinations set status = 'connected' where id = $1`, [row.id]);
  });
});

describe('the Overview', () => {
  it('says what needs attention: a platform to reconnect, failed conversions, conversions stuck in the queue; nothing when all is well', async () => {
    const browser = await signedIn();
    expect((await browser.get('/')).body).not.toContain('Needs your attention');
    const row = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' });
    await svc.db.query(`update destinations set status = 'reauthorization_required' where id = $1`, [row.id]);
    await insertEvent(svc.db, svc.site, { status: 'failed' }, 60);
    await insertEvent(svc.db, svc.site, { status: 'failed' }, 120);
    await insertEvent(svc.db, svc.site, { status: 'queued' }, 2 * 3600); // waiting for two hours: stuck
    await insertEvent(svc.db, svc.site, { status: 'queued' }, 10); // just now: on its way, not stuck
    await insertEvent(svc.db, svc.site, { status: 'failed' }, 8 * 86_400); // before the 7 days
    // An erased person's conversion is never sent, by design: nothing to fix, so not counted; the list says "erased".
    const erased = await insertEvent(svc.db, svc.site, { status: 'failed' }, 180);
    await svc.db.query(`update events set erased_at = now(), data = data || '{"erased": true}' where id = $1`, [erased]);
    const list = (await browser.get('/dashboard/events')).body;
    expect(list).toContain('>erased</span>');
    const page = decodeEntities((await browser.get('/')).body);
    expect(page).toContain('Needs your attention');
    expect(page).toContain('<strong>Meta</strong> needs to be connected again');
    expect(page).toContain('<strong>2 conversions</strong> failed to reach an ad platform in the last 7 days');
    expect(page).toContain('<strong>1 conversion has</strong> waited more than an hour');
    expect(page).toContain('href="/dashboard/events?status=failed"');
    expect(page).toContain("<a href=\"/dashboard/destinations\">Destinations</a> sends a platform's failed deliveries again with one press");
    expect(page).toContain('href="/dashboard/events?status=queued"');
  });

  it('caps what it counts, and says so', () => {
    const text = decodeEntities(String(attentionSection({ reconnect: [], failed: ATTENTION_COUNT_CAP, waiting: 0, days: 7 })));
    expect(text).toContain('<strong>1,000 or more conversions</strong> failed');
    expect(attentionSection({ reconnect: [], failed: 0, waiting: 0, days: 7 })).toBe('');
  });
});

describe('an adjusted conversion in the list', () => {
  const event = (adjustments: unknown[]) =>
    ({ id: 'evt_1', value: 29, currency: 'EUR', adjustments, actions: [] }) as unknown as Parameters<typeof currentValue>[0];
  it('shows the value as it now stands: struck and retracted, or restated with what was reported', () => {
    expect(String(currentValue(event([])))).toBe('EUR 29.00');
    const retracted = String(currentValue(event([{ type: 'retract', adjustment_id: 'a1' }])));
    expect(retracted).toContain('<s>EUR 29.00</s>');
    expect(retracted).toContain('retracted');
    const restated = String(currentValue(event([{ type: 'restate', adjustment_id: 'a1', value: 19, currency: 'EUR', superseded: false }])));
    expect(restated).toMatch(/^EUR 19\.00 <span class="badge">restated<\/span>/);
    expect(restated).toContain('reported EUR 29.00');
  });

  it('stays retracted when a restatement was stored after the retraction (before the webhook refused that)', () => {
    const revived = String(currentValue(event([
      { type: 'retract', adjustment_id: 'a1' },
      { type: 'restate', adjustment_id: 'a2', value: 30, currency: 'EUR', superseded: false },
    ])));
    expect(revived).toContain('<s>EUR 29.00</s>');
    expect(revived).toContain('retracted');
    expect(revived).not.toContain('30.00');
    expect(currentValueOf({ value: 29, currency: 'EUR' }, [
      { type: 'retract', value: null, currency: null, superseded: false },
      { type: 'restate', value: 30, currency: 'USD', superseded: false },
    ])).toEqual({ value: 0, currency: 'EUR' });
  });
});

describe('the Personal data page', () => {
  it("lists the latest 100 erasures, newest first, reading only those whatever the account's history holds", async () => {
    // A long history: 1,050 erasures of this account (and some of another, never shown).
    const other = await createTenant(svc.db, 'Other account');
    for (const [accountId, count] of [[svc.accountId, 1050], [other.accountId, 5]] as const) {
      await svc.db.query(
        `insert into erasures (id, account_id, fields, identity_hashes, matched, created_at)
         select 'era_hist' || $2 || '_' || i, $1, array['email'], array[]::text[], '{"reports": 0, "events": 0, "snapshots": 0, "form_submissions": 0}'::jsonb,
                timestamptz '2026-01-01T00:00:00Z' + i * interval '1 minute'
         from generate_series(1, $3::int) as i`,
        [accountId, accountId === svc.accountId ? 'mine' : 'theirs', count],
      );
    }
    let rowsRead = 0;
    const counting = new Proxy(svc.db, {
      get: (target, name, receiver) =>
        name === 'query'
          ? async (sql: string, params?: unknown[]) => {
              const rows = await target.query(sql, params);
              rowsRead += rows.length;
              return rows;
            }
          : Reflect.get(target, name, receiver),
    });
    const shown = await erasuresView(counting, svc.accountId);
    expect(shown.map((e) => e.id)).toEqual(Array.from({ length: 100 }, (_, i) => `era_histmine_${1050 - i}`));
    expect(rowsRead).toBe(100);
    const page = await (await signedIn()).get('/dashboard/privacy');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="era_histmine_1050"');
    expect(page.body).not.toContain('id="era_histmine_950"');
    expect(page.body).not.toContain('era_histtheirs');
  });
});
