/**
 * Hostile input on the surfaces added after hostile-input.test.ts: dashboard forms and pages, the OAuth callback, the
 * connection test, the agent tools over /mcp and a hosted destination form. NUL bytes, invalid UTF-8 (which form
 * decoding turns into U+FFFD), bad percent-encoding, long values and deep nesting: never a 5xx, nothing written.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { pressSignIn } from './support/dashboard-sign-in';

let svc: RestService;
let cookie = '';
let csrf = '';
beforeAll(async () => {
  svc = await createRestService(DATABASE_KINDS[0]!);
  const link = await issueSignInLink(svc.db, svc.settings, svc.accountId);
  const u = new URL(link.url);
  const res = await pressSignIn(svc.app, u);
  cookie = String(res.headers['set-cookie']).split(';')[0]!;
  const page = await svc.app.inject({ method: 'GET', url: '/', headers: { cookie } });
  csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
});
afterAll(() => svc.close());

const bad = ['\u0000', '\ud800', '%00', '%E0%A4%A', 'x'.repeat(20000)];
it('answers every hostile input on the dashboard, hosted, connection-test and agent-tool paths with a 4xx, writing nothing', async () => {
  const keysBefore = await svc.db.query('select id from api_keys');
  const out: string[] = [];
  const forms = ['/dashboard/sites', `/dashboard/sites/${svc.site.id}`, '/dashboard/destinations/connect', '/dashboard/flows', '/dashboard/keys', `/dashboard/sites/${svc.site.id}/webhook-secret`, '/dashboard/flows/flow_x/publish', '/dashboard/keys/key_x/revoke', '/dashboard/destinations/dst_x/test'];
  for (const path of forms) for (const v of bad) {
    const fields = ['name', 'domain', 'timezone', 'destination_type', 'label', 'trigger', 'key', 'integration', 'page_filter', 'site_id', 'actions', 'conversion_id'];
    const body = `_csrf=${encodeURIComponent(csrf)}&` + fields.map((f) => `${f}=${v.startsWith('%') ? v : (v === '\ud800' ? '%ED%A0%80' : encodeURIComponent(v))}`).join('&');
    const r = await svc.app.inject({ method: 'POST', url: path, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
    if (r.statusCode >= 500) out.push(`${path} ${JSON.stringify(v.slice(0, 10))} -> ${r.statusCode}`);
  }
  for (const v of ['%00', '%ff', '%ED%A0%80', 'a'.repeat(5000)]) for (const p of [`/dashboard/events/${v}`, `/dashboard/events?email=${v}`, `/dashboard/events?status=${v}&site_id=${v}&starting_after=${v}`, `/handoffs/oauth/callback?state=${v}&code=${v}`, `/dashboard/sign-in?token=${v}`, `/handoffs/${v}/authorize`]) {
    const r = await svc.app.inject({ method: 'GET', url: p, headers: { cookie } });
    if (r.statusCode >= 500) out.push(`GET ${p.slice(0, 60)} -> ${r.statusCode}`);
  }
  for (const payload of ['{"conversion_id":"\\u0000"}', '{"conversion_id":"\\ud800"}', '{"__proto__":{}}', '['.repeat(5000)]) {
    const r = await svc.app.inject({ method: 'POST', url: '/v1/destinations/dst_x/test', headers: { ...svc.auth, 'content-type': 'application/json' }, payload });
    if (r.statusCode >= 500) out.push(`test ${payload.slice(0, 20)} -> ${r.statusCode}`);
  }
  for (const payload of ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"update_site","arguments":{"id":"\\u0000","name":"\\ud800"}}}', '['.repeat(5000), '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_events","arguments":{"email":"a\\u0000b","starting_after":"\\ud800"}}}']) {
    const r = await svc.app.inject({ method: 'POST', url: '/mcp', headers: { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload });
    if (r.statusCode >= 500 || /internal_error/.test(r.body)) out.push(`mcp ${payload.slice(0, 40)} -> ${r.statusCode} ${r.body.slice(0, 200)}`);
  }
  const hosted = JSON.parse((await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: svc.auth, payload: { purpose: 'connect_destination', destination_type: 'meta' } })).body);
  for (const v of ['%00', '%ED%A0%80', '%ff']) {
    const r = await svc.app.inject({ method: 'POST', url: new URL(hosted.url).pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `pixel_id=${v}&access_token=${v}${'A'.repeat(30)}` });
    if (r.statusCode >= 500) out.push(`hosted ${v} -> ${r.statusCode}`);
  }
  expect(out).toEqual([]);
  // A NUL in a form is refused whole: of the key forms, only those whose label decodes to storable text made a key.
  expect((await svc.db.query('select id from api_keys')).length - keysBefore.length).toBe(2);
  expect(await svc.db.query('select id from destinations')).toHaveLength(0);
});
