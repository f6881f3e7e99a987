/**
 * Hostile request headers on every kind of route (the collector's beacon, preflight and config, the loader, the signed
 * webhook, the REST API, the dashboard, the health check, the agent tools): each of some twenty-five values (empty,
 * 8,000 characters, Latin-1 bytes, origins that only look like ones, malformed Bearer and signature values, content
 * types with foreign charsets) in each of thirteen headers, Host included. Never a 5xx: a Host that is no host name made
 * POST /mcp a 500 before (the transport's URL was built from it).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, setSiteDomain, snapshotBody } from './support/fixtures';
import { snapshotsPath } from '../../src/protocol/collector';
import { saasSignupPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';

const SECRET = 'whsec_hostile_headers_0123456789abcdef';
let svc: RestService;
beforeAll(async () => {
  svc = await createRestService(DATABASE_KINDS[0]!, { CNV_RATE_LIMITS: 'off' });
  await setSiteDomain(svc.db, svc.site.id, 'https://example.com');
  await connectApiTrigger(svc.db, svc.site, SECRET);
  await insertApiFlow(svc.db, svc.site, { triggerKey: 'signup' });
});
afterAll(() => svc.close());
const HOSTILE: readonly string[] = ['', ' ', 'null', 'x'.repeat(8000), '\u00ff\u00fe', 'https://', 'https://www.example.com:99999', 'https://www.example.com/path', 'https://user:pass@www.example.com', 'http://[::1]', 'https://xn--', 'https://www.example.com.', 'https://WWW.EXAMPLE.COM', 'Bearer', 'Bearer ', 'Bearer x', 'Basic Zm9vOmJhcg==', 'v1,t=1,s=', 't=abc,v1=', 't=99999999999999999999,v1=00', 'text/plain; charset=utf-16', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', '*/*', 'application/x-www-form-urlencoded'];
it('is never answered 5xx, whatever the headers hold', async () => {
  const faults: string[] = [];
  const hist: Record<string, number> = {};
  const targets = [
    { method: 'POST', url: snapshotsPath(svc.site.site_key), payload: JSON.stringify(snapshotBody()), headers: { 'content-type': 'text/plain', origin: 'https://www.example.com' } },
    { method: 'OPTIONS', url: snapshotsPath(svc.site.site_key), headers: { origin: 'https://www.example.com', 'access-control-request-method': 'POST' } },
    { method: 'GET', url: `/collect/v1/sites/${svc.site.site_key}/config`, headers: { origin: 'https://www.example.com' } },
    { method: 'GET', url: `/loader.js?site_key=${svc.site.site_key}`, headers: {} },
    {
      method: 'POST', url: saasSignupPath(svc.site.site_key, 'signup'), payload: '{"customer_event_id":"x","allow_uncorrelated":true}',
      headers: {
        'content-type': 'application/json',
        [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: SECRET, path: saasSignupPath(svc.site.site_key, 'signup'), body: '{"customer_event_id":"x","allow_uncorrelated":true}' }),
      },
    },
    { method: 'GET', url: '/v1/sites', headers: { ...svc.auth } },
    { method: 'POST', url: '/v1/sites', payload: '{"name":"x"}', headers: { ...svc.auth, 'content-type': 'application/json' } },
    { method: 'GET', url: '/', headers: {}, signedIn: false },
    { method: 'GET', url: '/healthz', headers: {} },
    { method: 'POST', url: '/mcp', payload: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers: { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } },
  ];
  for (const t of targets) for (const name of ['origin', 'content-type', 'authorization', 'x-service-signature', 'accept', 'accept-encoding', 'cookie', 'user-agent', 'x-forwarded-for', 'referer', 'host', 'if-none-match', 'range']) for (const v of HOSTILE) {
    const r = await svc.app.inject({ method: t.method as any, url: t.url, headers: { ...t.headers, [name]: v }, ...(t.payload ? { payload: t.payload } : {}) });
    const k = `${t.method} ${t.url.split('?')[0]!.replace(svc.site.site_key, ':key')} ${r.statusCode}`; hist[k] = (hist[k] ?? 0) + 1;
    if (r.statusCode >= 500) faults.push(`${t.method} ${t.url.slice(0, 60)} ${name}=${JSON.stringify(v).slice(0, 40)} -> ${r.statusCode} ${r.body.slice(0, 200)}`);
  }
  // Each route answered some requests 2xx: the refusals are about the headers.
  for (const t of targets.filter((target) => !('signedIn' in target))) expect(Object.keys(hist).some((k) => k.startsWith(`${t.method} ${t.url.split('?')[0]!.replace(svc.site.site_key, ':key')} 2`)), t.url).toBe(true);
  expect(faults).toEqual([]);
}, 300_000);
