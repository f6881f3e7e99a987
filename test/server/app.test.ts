import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app';
import { createHttpApp, redactUrl, REQUEST_TIMEOUT_MS } from '../../src/server/http/app';
import { connect } from 'node:net';
import type { Database } from '../../src/server/db/db';
import { loadSettings } from '../../src/server/settings';
import { insertAccount, issueApiKey } from '../../src/server/accounts/sql';
import { openMigratedPglite } from '../support/pglite';

describe('the app shell', () => {
  let db: Database;
  const lines: string[] = [];
  let app: Awaited<ReturnType<typeof buildApp>>;
  let auth: { authorization: string };
  beforeAll(async () => {
    db = await openMigratedPglite();
    const account = await insertAccount(db, 'shell');
    auth = { authorization: `Bearer ${(await issueApiKey(db, account.id)).key}` };
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    app = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off' }), logger: { level: 'debug', stream } });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  it('never writes a hosted page token into the request log', async () => {
    await app.inject({ method: 'GET', url: '/handoffs/SeCrEtToKeN123?x=1' });
    const logged = lines.join('');
    expect(logged).toContain('/handoffs/[redacted]');
    expect(logged).not.toContain('SeCrEtToKeN123');
  });

  it('logs one line per request, at debug level only', async () => {
    const quiet: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        quiet.push(String(chunk));
        done();
      },
    });
    const infoApp = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off' }), logger: { level: 'info', stream } });
    await infoApp.inject({ method: 'GET', url: '/v1/sites', headers: auth });
    await infoApp.close();
    expect(quiet.join('')).not.toMatch(/incoming request|request completed/);
    lines.length = 0;
    await app.inject({ method: 'GET', url: '/v1/sites', headers: auth });
    const logged = lines.join('');
    expect(logged.match(/request completed/g)).toHaveLength(1);
    expect(logged).not.toContain('incoming request');
  });

  it('redacts only the hosted page path, not the REST path of a handoff', () => {
    expect(redactUrl('/handoffs/abc')).toBe('/handoffs/[redacted]');
    expect(redactUrl('/v1/handoffs/hdf_1')).toBe('/v1/handoffs/hdf_1');
  });

  it('logs a query value only when it is known harmless: an email filter, a token or a new parameter is redacted', () => {
    expect(redactUrl('/v1/events?email=ada%40example.org&limit=5&site_id=site_1')).toBe('/v1/events?email=[redacted]&limit=5&site_id=site_1');
    expect(redactUrl('/dashboard/sign-in?token=abc')).toBe('/dashboard/sign-in?token=[redacted]');
    expect(redactUrl('/x?code=c&state=s&new_thing=v&flag')).toBe('/x?code=[redacted]&state=[redacted]&new_thing=[redacted]&flag');
    expect(redactUrl('/v1/sites')).toBe('/v1/sites');
  });

  it('logs a harmless parameter only when its value has the shape of one: personal data typed into a cursor is redacted', () => {
    const kept = '/v1/events?limit=25&starting_after=2026-11-21T09%3A30%3A00.123456Z&site_id=site_Ab3_x-9&status=failed&from=2026-11-01';
    expect(redactUrl(kept)).toBe(kept);
    expect(redactUrl('/v1/sites?ending_before=site_abc&limit=1000')).toBe('/v1/sites?ending_before=site_abc&limit=1000');
    for (const value of ['foo%40bar.com', 'ada@example.org', '%2B15551234567', '15551234567', 'Ada+Lovelace', 'ada%20lovelace', '%E0%A4%A']) {
      expect(redactUrl(`/v1/sites?starting_after=${value}`), value).toBe('/v1/sites?starting_after=[redacted]');
    }
  });

  it('redacts personal data typed where an id or a parameter name goes: in a path segment, a bare query name', () => {
    expect(redactUrl('/v1/events/ada@example.org')).toBe('/v1/events/[redacted]');
    expect(redactUrl('/v1/events/ada%40example.org/redeliver?limit=5')).toBe('/v1/events/[redacted]/redeliver?limit=5');
    expect(redactUrl('/v1/sites/%2B44%2020%207946%200958')).toBe('/v1/sites/[redacted]');
    expect(redactUrl('/dashboard/events/203.0.113.77')).toBe('/dashboard/events/[redacted]');
    expect(redactUrl('/v1/events?ada@example.org')).toBe('/v1/events?[redacted]');
    expect(redactUrl('/v1/events?ada%40example.org=1&limit=5')).toBe('/v1/events?[redacted]=[redacted]&limit=5');
    // Ids, keys and the service's own paths stay.
    for (const kept of ['/v1/events/evt_8Hq2LmZ0aB1c2D3e4F5g/redeliver', '/collect/v1/sites/50djupg2ctqx/snapshots', '/loader.js?site_key=50djupg2ctqx', '/api/webhook-bridge/saas-signup/50djupg2ctqx/demo-signup', '/dashboard/sites/site_1/install-check', '/x?flag&limit=5']) {
      expect(redactUrl(kept)).toBe(kept);
    }
  });

  it("never logs a request's email filter nor the client's address, at debug level either", async () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => lines.push(line) };
    const debugApp = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off' }), logger: { level: 'debug', stream } });
    await debugApp.inject({
      method: 'GET', url: '/v1/events?email=private.person%40example.org', remoteAddress: '203.0.113.77',
      headers: { ...auth, 'x-forwarded-for': '198.51.100.66' },
    });
    // Refused (not a cursor), and not logged as sent either.
    await debugApp.inject({ method: 'GET', url: '/v1/sites?starting_after=second.person%40example.org', headers: auth });
    // An email where an id goes: refused (404), and not logged as sent either.
    await debugApp.inject({ method: 'GET', url: '/v1/events/third.person%40example.org', headers: auth });
    await debugApp.close();
    const logged = lines.join('');
    expect(logged).toContain('/v1/events?email=[redacted]');
    expect(logged).toContain('/v1/sites?starting_after=[redacted]');
    expect(logged).toContain('/v1/events/[redacted]');
    for (const secret of ['private.person', 'second.person', 'third.person', '203.0.113.77', '198.51.100.66']) expect(logged).not.toContain(secret);
  });

  it('says once, naming CNV_TRUST_PROXY and no address, when X-Forwarded-For comes from a peer it does not trust', async () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => lines.push(line) };
    const warnings = () => lines.map((line) => JSON.parse(line)).filter((line) => line.level === 40 && /X-Forwarded-For/.test(line.msg));
    const proxied = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off' }), logger: { level: 'info', stream } });
    const via = (remoteAddress: string) => proxied.inject({ method: 'GET', url: '/healthz', remoteAddress, headers: { 'x-forwarded-for': '198.51.100.66' } });
    // From a proxy on this machine (trusted by default): nothing to say, whatever it forwards.
    await via('127.0.0.1');
    await proxied.inject({ method: 'GET', url: '/healthz', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(warnings()).toEqual([]);
    // From a proxy elsewhere, as behind a load balancer nobody named: every visitor would have its address.
    await via('10.1.2.3');
    await via('10.1.2.3');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0].msg).toMatch(/CNV_TRUST_PROXY/);
    for (const address of ['10.1.2.3', '198.51.100.66']) expect(lines.join('')).not.toContain(address);
    await proxied.close();
    // Told not to trust any proxy: the header is ignored on purpose, nothing said.
    lines.length = 0;
    const direct = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off', CNV_TRUST_PROXY: 'false' }), logger: { level: 'info', stream } });
    await direct.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': '198.51.100.66' } });
    await direct.close();
    expect(warnings()).toEqual([]);
  });

  it('never logs a hosted page token nor a sign-in token sent with an absolute-form request target, at debug level either', async () => {
    // `GET http://host/handoffs/TOKEN HTTP/1.1` (what a client configured with the service as its proxy sends) is
    // routed like `GET /handoffs/TOKEN`, and its url was logged as sent.
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const token = 'AbsoluteFormToken0123456789abcd';
    for (const target of [`http://cnv.example/handoffs/${token}`, `HTTP://cnv.example:8443/handoffs/${token}/authorize`, `http://cnv.example/dashboard/sign-in?token=${token}`]) {
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: cnv.example\r\nConnection: close\r\n\r\n`));
        socket.on('data', (chunk) => (text += chunk));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer, target).toMatch(/^HTTP\/1\.1 \d{3}/);
    }
    const logged = lines.join('');
    expect(logged).toContain('"url":"/handoffs/[redacted]"');
    expect(logged).not.toContain(token);
    expect(redactUrl(`https://cnv.example/handoffs/${token}`)).toBe('/handoffs/[redacted]');
    expect(redactUrl('http://cnv.example/v1/events?email=a%40b.example&limit=5')).toBe('/v1/events?email=[redacted]&limit=5');
  });

  it('never logs a webhook secret or an API key pasted into a path or a query value of the shape of an id, at debug level either', async () => {
    // A swapped setting puts a secret where a site key, an id or a cursor goes: the request is refused (404, 400 or
    // 401), and its url reached the debug line as sent, since such values keep their shape of an id.
    const secret = 'whsec_PastedIntoThePath0123456789abcdef';
    const apiKey = 'cnv_sk_PastedIntoTheQuery0123456789abcd';
    await app.inject({ method: 'POST', url: `/api/webhook-bridge/saas-signup/${secret}/signup`, payload: '{}', headers: { 'content-type': 'application/json' } });
    await app.inject({ method: 'GET', url: `/v1/sites/${apiKey}`, headers: auth });
    await app.inject({ method: 'GET', url: `/v1/events?site_id=${apiKey}&starting_after=${secret}`, headers: auth });
    await app.inject({ method: 'GET', url: `/collect/v1/sites/${secret}/config` });
    const logged = lines.join('');
    expect(logged).toContain('/api/webhook-bridge/saas-signup/[redacted]/signup');
    expect(logged).toContain('/v1/events?site_id=[redacted]&starting_after=[redacted]');
    expect(logged).not.toContain('PastedInto');
    expect(redactUrl('/v1/sites/site_abc?limit=5')).toBe('/v1/sites/site_abc?limit=5');
  });

  it('answers an unknown route with the error envelope', async () => {
    const res = await app.inject({ method: 'GET', url: '/nowhere?a=b' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { type: 'not_found_error', code: 'route_not_found', message: 'No route: GET /nowhere.' } });
  });

  it('answers a method a path is not served with 405 method_not_allowed, its Allow header naming the methods it is', async () => {
    for (const [method, url, allow] of [
      ['DELETE', '/v1/sites/site_123', 'GET, HEAD, PATCH'],
      ['POST', '/v1/sites/site_123?x=1', 'GET, HEAD, PATCH'],
      ['PUT', '/v1/sites', 'GET, HEAD, POST'],
      ['OPTIONS', '/v1/sites', 'GET, HEAD, POST'],
      ['PATCH', '/v1/events/evt_1', 'GET, HEAD'],
      ['GET', '/v1/flows/flow_1/publish', 'POST'],
      ['GET', '/api/webhook-bridge/saas-signup/site_key_1/trigger_key_1', 'POST'],
      ['PUT', '/api/webhook-bridge/conversion/site_key_1/trigger_key_1', 'POST'],
      ['OPTIONS', '/api/webhook-bridge/adjustment/site_key_1', 'POST'],
      ['DELETE', '/handoffs/SeCrEtToKeN123', 'GET, HEAD, POST'],
      ['PUT', '/collect/v1/sites/site_key_1/config', 'GET, HEAD'],
      ['GET', '/collect/v1/sites/site_key_1/snapshots', 'POST, OPTIONS'],
      ['POST', '/v1/openapi.json', 'GET, HEAD'],
      ['POST', '/healthz', 'GET, HEAD'],
    ] as const) {
      const res = await app.inject({ method, url, headers: auth });
      const path = url.split('?')[0];
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow, `${method} ${url}`).toBe(allow);
      expect(res.json(), `${method} ${url}`).toEqual({
        error: { type: 'invalid_request_error', code: 'method_not_allowed', message: `${method} is not allowed on ${path}: it is served with ${allow}.` },
      });
    }
    // Without a key too: the route is not found before any authentication.
    expect((await app.inject({ method: 'DELETE', url: '/v1/sites' })).statusCode).toBe(405);
    // A HEAD where only POST is served: the status and Allow, no body.
    const head = await app.inject({ method: 'HEAD', url: '/v1/flows/flow_1/publish' });
    expect([head.statusCode, head.headers.allow, head.body]).toEqual([405, 'POST', '']);
  });

  it('keeps 404 route_not_found for a path no method is served on, and /mcp its own 405', async () => {
    for (const [method, url] of [['DELETE', '/v1/nowhere'], ['GET', '/v1/sites/site_1/nothing'], ['POST', '/api/webhook-bridge/unknown/a/b'], ['GET', '/handoffs/a/b/c']] as const) {
      const res = await app.inject({ method, url, headers: auth });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code, `${method} ${url}`).toBe('route_not_found');
      expect(res.headers.allow).toBeUndefined();
    }
    const mcp = await app.inject({ method: 'GET', url: '/mcp' });
    expect([mcp.statusCode, mcp.headers.allow, mcp.json().error.code]).toEqual([405, 'POST', 'method_not_allowed']);
  });

  it('answers a wrong method or an unknown path by its route, whatever body it carries (never the body\'s 400 or 415)', async () => {
    const bodies = [
      { 'content-type': 'application/json', payload: '' },
      { 'content-type': 'application/json', payload: '{"name":' },
      { 'content-type': 'application/json', payload: '\u0000' },
      { 'content-type': 'application/json', payload: '"x"' },
      { 'content-type': 'text/csv', payload: 'a,b' },
      { 'content-type': 'application/x-www-form-urlencoded', payload: 'a=%zz' },
    ];
    for (const { payload, ...headers } of bodies) {
      for (const [method, url, allow] of [
        ['PUT', '/v1/sites', 'GET, HEAD, POST'],
        ['DELETE', '/v1/sites/site_123', 'GET, HEAD, PATCH'],
        ['PUT', '/api/webhook-bridge/saas-signup/site_key_1/trigger_key_1', 'POST'],
        ['PATCH', '/collect/v1/sites/site_key_1/snapshots', 'POST, OPTIONS'],
        ['PUT', '/handoffs/SeCrEtToKeN123', 'GET, HEAD, POST'],
      ] as const) {
        const res = await app.inject({ method, url, payload, headers: { ...auth, ...headers } });
        const label = `${method} ${url} with ${headers['content-type']} ${JSON.stringify(payload)}`;
        expect(res.statusCode, label).toBe(405);
        expect(res.headers.allow, label).toBe(allow);
        expect(res.json().error.code, label).toBe('method_not_allowed');
      }
      for (const [method, url] of [['POST', '/v1/nowhere'], ['PUT', '/api/webhook-bridge/unknown/a/b']] as const) {
        const res = await app.inject({ method, url, payload, headers: { ...auth, ...headers } });
        const label = `${method} ${url} with ${headers['content-type']} ${JSON.stringify(payload)}`;
        expect(res.statusCode, label).toBe(404);
        expect(res.json().error.code, label).toBe('route_not_found');
      }
    }
    // Too large a body for an unknown route is still the route's answer, and a served route still reads its body.
    const large = await app.inject({ method: 'PUT', url: '/v1/sites', payload: `{"a":"${'x'.repeat(2_000_000)}"}`, headers: { ...auth, 'content-type': 'application/json' } });
    expect([large.statusCode, large.json().error.code]).toEqual([405, 'method_not_allowed']);
    const served = await app.inject({ method: 'POST', url: '/v1/sites', payload: '{"name":', headers: { ...auth, 'content-type': 'application/json' } });
    expect([served.statusCode, served.json().error.code]).toEqual([400, 'invalid_json']);
  });

  it('answers malformed JSON with invalid_json', async () => {
    const res = await app.inject({
      method: 'POST', url: '/v1/sites', payload: '{"name":', headers: { ...auth, 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });
});

describe('the methods a path is served with', () => {
  it("matches as Fastify's router does: parameters, a plugin's '/' route with and without the slash, HEAD beside GET", async () => {
    const app = createHttpApp(false);
    app.route({ method: ['PUT', 'DELETE'], url: '/things/:id', handler: async () => ({}) });
    app.get('/files/:name', async (_request, reply) => reply.callNotFound());
    app.get('/things/:id/parts/*', { exposeHeadRoute: false }, async () => ({}));
    await app.register(async (scope) => void scope.get('/', async () => ({})), { prefix: '/home' });
    await app.ready();
    const allow = async (method: 'GET' | 'POST', url: string) => {
      const res = await app.inject({ method, url });
      return `${res.statusCode} ${res.headers.allow ?? '-'}`;
    };
    expect(await allow('GET', '/things/a%20b')).toBe('405 PUT, DELETE');
    expect(await allow('POST', '/things/1/parts/x/y')).toBe('405 GET');
    expect(await allow('POST', '/home')).toBe('405 GET, HEAD');
    expect(await allow('POST', '/home/')).toBe('405 GET, HEAD');
    expect(await allow('GET', '/things')).toBe('404 -');
    expect(await allow('GET', '/Things/1')).toBe('404 -');
    // A route that finds nothing at its own path (reply.callNotFound) is a 404: its method is served there.
    expect(await allow('GET', '/files/nothing.js')).toBe('404 -');
    expect(await allow('POST', '/files/nothing.js')).toBe('405 GET, HEAD');
    await app.close();
  });
});

describe('a request that stops arriving', () => {
  it('is answered 408 with the envelope once its time is up, and its connection closed', async () => {
    // The service's own timeouts are 30 s (checked every 5 s); the same app with shorter ones.
    expect(REQUEST_TIMEOUT_MS).toBe(30_000);
    const app = createHttpApp(false, true, undefined, { requestTimeoutMs: 300, checkEveryMs: 100 });
    let handled = false;
    app.post('/slow', async () => {
      handled = true;
      return { ok: true };
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = new URL(address);
      const answer = await new Promise<string>((resolve, reject) => {
        // Says 100 bytes, sends 12, then nothing.
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"ab'),
        );
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString('latin1')));
        socket.on('close', () => resolve(data));
        socket.on('error', (error) => (data ? resolve(data) : reject(error)));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout' });
      expect(handled).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('answered early (before its body) gets that one answer and a closed connection, never a 408 after it', async () => {
    const app = createHttpApp(false, true, undefined, { requestTimeoutMs: 300, checkEveryMs: 100 });
    app.addHook('onRequest', (request, reply, done) => {
      if (request.headers.authorization === undefined) return void reply.status(401).send({ error: { code: 'missing_api_key' } });
      done();
    });
    app.post('/things', async () => ({ ok: true }));
    app.get('/things', async () => ({ ok: true }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const exchange = (request: string, waitForClose: boolean) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(address);
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
        let data = '';
        socket.on('data', (chunk) => {
          data += chunk.toString('latin1');
          if (!waitForClose && data.includes('\r\n\r\n{')) socket.destroy();
        });
        socket.on('close', () => resolve(data));
        socket.on('error', (error) => (data ? resolve(data) : reject(error)));
      });
    try {
      // No key, says 100 bytes, sends 1: answered 401 at once, then the connection closes (the 408 would come 300 ms on).
      const early = await exchange('POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{', true);
      expect(early).toMatch(/^HTTP\/1\.1 401 /);
      expect(early.toLowerCase()).toContain('connection: close');
      expect(early.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      // A request read whole keeps its connection, with or without a body.
      for (const request of [
        'POST /things HTTP/1.1\r\nHost: x\r\nAuthorization: k\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
        'GET /things HTTP/1.1\r\nHost: x\r\nAuthorization: k\r\n\r\n',
        'GET /things HTTP/1.1\r\nHost: x\r\n\r\n',
      ]) {
        const answer = await exchange(request, false);
        expect(answer.toLowerCase(), request).toContain('connection: keep-alive');
      }
    } finally {
      await app.close();
    }
  });
});
