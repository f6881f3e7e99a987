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

const HOSTILE: readonly string[] = [
  '', ' ', 'null', 'x'.repeat(8000), '\u00ff\u00fe',
  // origins that only look like ones
  'https://', 'https://www.example.com:99999', 'https://www.example.com/path', 'https://user:pass@www.example.com',
  'http://[::1]', 'https://xn--', 'https://www.example.com.', 'https://WWW.EXAMPLE.COM',
  // credentials and signatures
  'Bearer', 'Bearer ', 'Bearer x', 'Basic Zm9vOmJhcg==', 'v1,t=1,s=', 't=abc,v1=', 't=99999999999999999999,v1=00',
  // content types
  'text/plain; charset=utf-16', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', '*/*',
  'application/x-www-form-urlencoded',
];
const HEADERS = [
  'origin', 'content-type', 'authorization', SIGNATURE_HEADER.toLowerCase(), 'accept', 'accept-encoding', 'cookie', 'user-agent',
  'x-forwarded-for', 'referer', 'host', 'if-none-match', 'range',
];

/** A request each hostile header value replaces one header of; `signedOut`: answered 401 whatever the headers (no session). */
interface Target {
  label: string;
  method: 'GET' | 'POST' | 'OPTIONS';
  url: string;
  headers: Record<string, string>;
  payload?: string;
  signedOut?: true;
}

function targets(): Target[] {
  const key = svc.site.site_key;
  const origin = { origin: 'https://www.example.com' };
  const report = '{"customer_event_id":"x","allow_uncorrelated":true}';
  const reportPath = saasSignupPath(key, 'signup');
  return [
    { label: 'snapshot', method: 'POST', url: snapshotsPath(key), payload: JSON.stringify(snapshotBody()), headers: { ...origin, 'content-type': 'text/plain' } },
    { label: 'snapshot preflight', method: 'OPTIONS', url: snapshotsPath(key), headers: { ...origin, 'access-control-request-method': 'POST' } },
    { label: 'site config', method: 'GET', url: `/collect/v1/sites/${key}/config`, headers: origin },
    { label: 'loader', method: 'GET', url: `/loader.js?site_key=${key}`, headers: {} },
    {
      label: 'signed webhook', method: 'POST', url: reportPath, payload: report,
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: SECRET, path: reportPath, body: report }) },
    },
    { label: 'REST list', method: 'GET', url: '/v1/sites', headers: svc.auth },
    { label: 'REST create', method: 'POST', url: '/v1/sites', payload: '{"name":"x"}', headers: { ...svc.auth, 'content-type': 'application/json' } },
    { label: 'dashboard', method: 'GET', url: '/', headers: {}, signedOut: true },
    { label: 'health check', method: 'GET', url: '/healthz', headers: {} },
    {
      label: 'agent tools', method: 'POST', url: '/mcp', payload: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      headers: { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    },
  ];
}

it('is never answered 5xx, whatever the headers hold', async () => {
  const faults: string[] = [];
  const succeeded = new Set<string>();
  for (const target of targets()) {
    for (const name of HEADERS) {
      for (const value of HOSTILE) {
        const res = await svc.app.inject({
          method: target.method, url: target.url, headers: { ...target.headers, [name]: value },
          ...(target.payload ? { payload: target.payload } : {}),
        });
        if (res.statusCode < 300) succeeded.add(target.label);
        if (res.statusCode >= 500) faults.push(`${target.label} ${name}=${JSON.stringify(value).slice(0, 40)} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
  }
  // Each route answered some of them 2xx: its refusals are about the headers.
  expect([...succeeded].sort()).toEqual(targets().filter((target) => !target.signedOut).map((target) => target.label).sort());
  expect(faults).toEqual([]);
}, 300_000);
