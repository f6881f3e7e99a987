/**
 * Hostile input at every edge of the real app: whatever arrives, the answer is a 4xx with the error envelope that names
 * the parameter, nothing is written, and no message carries raw control characters, an email, a token or a secret.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, newToken, setSiteDomain, signedReport, snapshotBody } from './support/fixtures';
import { snapshotsPath, SNAPSHOT_CONTENT_TYPE, type Snapshot } from '../../src/protocol/collector';
import { findSnapshot } from '../../src/server/collector/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { upsertDestination } from '../../src/server/destinations/sql';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { SIGNATURE_HEADER } from '../../src/protocol/webhook';

const SECRET = 'whsec_hostile_input_test_secret_0123456789';
const ORIGIN = 'https://www.example.com';
/** Raw control characters (a tab, a newline, a NUL, DEL, C1) never appear in a message. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Asserts the envelope of a 4xx: status, type, code and param, and a message without control characters. */
function expectEnvelope(res: LightMyRequestResponse, status: number, code: string, param?: string): { message: string } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  const { error } = res.json() as { error: { type: string; code: string; message: string; param?: string } };
  expect(error.type).toBe('invalid_request_error');
  expect(error.code).toBe(code);
  if (param === undefined) expect(error).not.toHaveProperty('param');
  else expect(error.param).toBe(param);
  expect(error.message).not.toMatch(CONTROL);
  return error;
}

describe.each(DATABASE_KINDS)('hostile input on $name', (kind) => {
  let svc: RestService;
  /** Rows of every table a request could write, to prove a refused request wrote nothing. */
  const counts = async () =>
    JSON.stringify(
      await svc.db.query(
        `select (select count(*)::int from sites) as sites, (select count(*)::int from flows) as flows,
                (select count(*)::int from handoffs) as handoffs, (select count(*)::int from reports) as reports,
                (select count(*)::int from events) as events, (select count(*)::int from snapshots) as snapshots`,
      ),
    );
  const rest = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: string) =>
    svc.app.inject({
      method, url, headers: { ...svc.auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload }),
    });

  beforeAll(async () => {
    svc = await createRestService(kind);
    await setSiteDomain(svc.db, svc.site.id, 'https://example.com');
    await connectApiTrigger(svc.db, svc.site, SECRET);
    await insertApiFlow(svc.db, svc.site, { triggerKey: 'signup' });
    await upsertDestination(svc.db, svc.accountId, 'google-ads', { customer_id: '1234567890' });
  });
  afterAll(() => svc.close());

  describe('a NUL byte in a path id or a query value', () => {
    it.each([
      ['/v1/sites/site_%00x', 'id'],
      ['/v1/flows/flow_%00', 'id'],
      ['/v1/handoffs/%00', 'id'],
      ['/v1/events/evt_%00', 'id'],
      ['/v1/flows?site_id=%00', 'site_id'],
      ['/v1/events?site_id=%00', 'site_id'],
      ['/v1/events?flow_id=flow_%00', 'flow_id'],
      ['/v1/events?email=a%00b', 'email'],
    ])('GET %s is 400 parameter_invalid naming %s', async (url, param) => {
      expectEnvelope(await rest('GET', url), 400, 'parameter_invalid', param);
    });

    it.each([
      ['/v1/sites?starting_after=%00', 'starting_after'],
      ['/v1/sites?ending_before=site_%00', 'ending_before'],
      ['/v1/flows?starting_after=%00', 'starting_after'],
      ['/v1/events?starting_after=%00', 'starting_after'],
    ])('GET %s is 400 invalid_cursor naming %s, as the spec says of a cursor that does not resolve', async (url, param) => {
      expectEnvelope(await rest('GET', url), 400, 'invalid_cursor', param);
    });

    it('never quotes an email filter back, even a refused one', async () => {
      const { message } = expectEnvelope(await rest('GET', '/v1/events?email=ada%40example.com%00'), 400, 'parameter_invalid', 'email');
      expect(message).not.toContain('ada@example.com');
    });

    it('PATCH /v1/sites/site_%00x changes nothing', async () => {
      const before = await counts();
      expectEnvelope(await rest('PATCH', '/v1/sites/site_%00x', '{"name":"x"}'), 400, 'parameter_invalid', 'id');
      expect(await counts()).toBe(before);
    });

    it('GET /collect/v1/sites/%00/config is 400 naming site_key, readable from any page', async () => {
      const res = await svc.app.inject({ method: 'GET', url: '/collect/v1/sites/%00/config' });
      expectEnvelope(res, 400, 'parameter_invalid', 'site_key');
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });

    it('POST /collect/v1/sites/%00/snapshots is 400 naming site_key and stores nothing', async () => {
      const before = await counts();
      const res = await svc.app.inject({
        method: 'POST', url: '/collect/v1/sites/%00/snapshots', headers: { origin: ORIGIN, 'content-type': SNAPSHOT_CONTENT_TYPE },
        payload: JSON.stringify(snapshotBody()),
      });
      expectEnvelope(res, 400, 'parameter_invalid', 'site_key');
      expect(await counts()).toBe(before);
    });

    it.each([
      ['/api/webhook-bridge/saas-signup/%00/k', 'site_key'],
      ['/api/webhook-bridge/saas-signup/SITE/%00', 'trigger_key'],
    ])('POST %s is 400 naming %s and records nothing', async (path, param) => {
      const before = await counts();
      const res = await svc.app.inject({
        method: 'POST', url: path.replace('SITE', svc.site.site_key), headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ customer_event_id: 'nul-path', correlation_token: null }),
      });
      expectEnvelope(res, 400, 'parameter_invalid', param);
      expect(await counts()).toBe(before);
    });
  });

  describe('a number beyond a double (1e999, read as Infinity)', () => {
    const report = (fields: string) =>
      svc.app.inject(signedReport(svc.site.site_key, 'signup', null, SECRET, {
        rawBody: `{"correlation_token":null,"customer_event_id":"evt-${newToken()}",${fields}}`,
      }));

    it('in the webhook value is refused with 400 naming it, recording nothing', async () => {
      const before = await counts();
      expectEnvelope(await report('"value":1e999,"currency":"EUR"'), 400, 'parameter_invalid', 'value');
      expect(await counts()).toBe(before);
    });

    it('anywhere in a webhook or collector body, even a field they ignore, is 400 naming it (a loader never writes one: JSON.stringify cannot)', async () => {
      const before = await counts();
      expectEnvelope(await report('"nickname":{"n":[1e999]}'), 400, 'parameter_invalid', 'nickname.n[0]');
      const body = snapshotBody();
      const res = await svc.app.inject({
        method: 'POST', url: snapshotsPath(svc.site.site_key), headers: { origin: ORIGIN, 'content-type': SNAPSHOT_CONTENT_TYPE },
        payload: JSON.stringify({ ...body, extra: 'X' }).replace('"X"', '-1e999'),
      });
      expectEnvelope(res, 400, 'parameter_invalid', 'extra');
      expect(await counts()).toBe(before);
    });
  });

  describe('a lone UTF-16 surrogate', () => {
    const report = (fields: Record<string, unknown>) =>
      svc.app.inject(signedReport(svc.site.site_key, 'signup', null, SECRET, {
        rawBody: JSON.stringify({ correlation_token: null, customer_event_id: `evt-${newToken()}`, ...fields }).replace('LONE', '\\ud800'),
      }));

    it.each(['customer_event_id', 'email', 'first_name', 'last_name', 'phone'])(
      'in the webhook field %s is refused with 400 naming it (not a 500 the client would retry until the conversion is lost)',
      async (field) => {
        const before = await counts();
        const res = await report({ [field]: field === 'customer_event_id' ? 'LONE' : 'aLONEb' });
        const { message } = expectEnvelope(res, 400, 'parameter_invalid', field);
        expect(message).toMatch(/surrogate/);
        expect(await counts()).toBe(before);
      },
    );

    it('in a webhook field the service ignores changes nothing: the report is recorded', async () => {
      const res = await report({ nickname: 'LONE' });
      expect(res.statusCode, res.body).toBe(200);
    });

    it('in a snapshot is read leniently: a damaged click id is dropped, a URL repaired, the rest of the click kept', async () => {
      const body = snapshotBody();
      const text = JSON.stringify({
        ...body,
        page_url: 'https://www.example.com/signupLONE',
        touch: { ...body.touch, click_ids: { gclid: 'Cj0-good', fbclid: 'fbLONE' }, utm: { utm_source: 'googleLONE', utm_medium: 'cpc' } },
        cookies: { _fbp: 'fb.1.LONE' },
      }).replaceAll('LONE', '\\udc00');
      const res = await svc.app.inject({
        method: 'POST', url: snapshotsPath(svc.site.site_key), headers: { origin: ORIGIN, 'content-type': SNAPSHOT_CONTENT_TYPE }, payload: text,
      });
      expect(res.statusCode, res.body).toBe(204);
      const row = await findSnapshot(svc.db, svc.site.id, body.correlation_token);
      expect(row!.touch!.click_ids).toEqual({ gclid: 'Cj0-good' });
      expect(row!.touch!.utm).toEqual({ utm_medium: 'cpc' });
      expect(row!.cookies).toEqual({});
      expect(row!.page_url).toBe('https://www.example.com/signup\ufffd');
    });

    it.each([
      ['{"site_id":"SITE","name":"f","trigger_config":{"integrationId":"html","pageFilter":"LONE"},"actions_config":[{"integrationId":"google-ads","config":{}}]}', 'trigger_config.pageFilter'],
      ['{"site_id":"SITE","name":"f","trigger_config":{"integrationId":"html","pageFilter":"all"},"actions_config":[{"integrationId":"google-ads","config":{"LONE":1}}]}', 'actions_config[0].config.\\ud800'],
      ['{"site_id":"SITE","name":"aLONE","trigger_config":{"integrationId":"html","pageFilter":"all"},"actions_config":[{"integrationId":"google-ads","config":{}}]}', 'name'],
      ['{"site_id":"SITE","name":"f","trigger_config":{"integrationId":"html","pageFilter":"all"},"actions_config":[{"integrationId":"google-ads","config":{"conversion":{"id":"1"},"n":1e999}}]}', 'actions_config[0].config.n'],
    ])('in a REST body %s is 400 naming %s, creating nothing', async (payload, param) => {
      const before = await counts();
      const res = await rest('POST', '/v1/flows', payload.replace('SITE', svc.site.id).replace('LONE', '\\ud800'));
      expectEnvelope(res, 400, 'parameter_invalid', param);
      expect(await counts()).toBe(before);
    });
  });

  describe('malformed paths and oversized or invalid requests', () => {
    it.each(['/v1/sites/%E0%A4%A', '/v1/sites/%ff%fe', '/v1/sites/%C0%80', '/collect/v1/sites/%E0%A4%A/config', '/api/webhook-bridge/saas-signup/%ff/k'])(
      'GET or POST %s (malformed percent-encoding) is 400 invalid_path, never echoing the path',
      async (url) => {
        const res = await svc.app.inject({ method: url.startsWith('/api/') ? 'POST' : 'GET', url, headers: svc.auth });
        const { message } = expectEnvelope(res, 400, 'invalid_path');
        expect(message).not.toContain(/%[^/]+/.exec(url)![0]);
      },
    );

    it('a query parameter with malformed percent-encoding or bytes that are not UTF-8 is 400 parameter_invalid, naming it', async () => {
      for (const [url, param] of [
        ['/v1/sites?starting_after=%E0%A4%A', 'starting_after'], ['/v1/events?email=%zz', 'email'], ['/v1/events?email=%', 'email'],
        ['/v1/events?email=%C0%AF', 'email'], ['/v1/events?email=%ED%A0%80', 'email'], ['/v1/flows?site_id=%FF', 'site_id'],
        ['/v1/events?limit=5&email=a%2', 'email'],
      ] as const) {
        const res = await rest('GET', url);
        const { message } = expectEnvelope(res, 400, 'parameter_invalid', param);
        expect(message, url).toMatch(/not well percent-encoded UTF-8/);
      }
      // Well-encoded text is still read as it is (an email filter with its @ encoded).
      expect((await rest('GET', '/v1/events?email=ada%40example.com&limit=1')).statusCode).toBe(200);
    });

    it('an over-long path id is 414 path_too_long, saying so', async () => {
      const res = await rest('GET', `/v1/sites/site_${'x'.repeat(200)}`);
      const { message } = expectEnvelope(res, 414, 'path_too_long');
      expect(message).toMatch(/too long/);
      expect(message).not.toMatch(/Bad Request/);
    });

    it('oversized headers are 431, invalid headers 400 and CONNECT 405, with the envelope, on a real socket', async () => {
      const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
      try {
        const { port } = new URL(address);
        const send = (head: string) =>
          new Promise<string>((resolve, reject) => {
            const socket = connect(Number(port), '127.0.0.1', () => socket.write(head));
            let data = '';
            socket.on('data', (chunk) => (data += chunk.toString('latin1')));
            socket.on('close', () => resolve(data));
            socket.on('error', (error) => (data ? resolve(data) : reject(error)));
          });
        const big = await send(`GET /v1/sites HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nX-Big2: ${'b'.repeat(60_000)}\r\n\r\n`);
        expect(big).toMatch(/^HTTP\/1\.1 431 /);
        expect(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ type: 'invalid_request_error', code: 'headers_too_large' });
        const bad = await send('GET /v1/sites HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n');
        expect(bad).toMatch(/^HTTP\/1\.1 400 /);
        expect(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
        // CONNECT, which Node would close unanswered: 405 with the envelope.
        const tunnel = await send('CONNECT /v1/sites HTTP/1.1\r\nHost: x\r\n\r\n');
        expect(tunnel).toMatch(/^HTTP\/1\.1 405 /);
        expect(JSON.parse(tunnel.slice(tunnel.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
      } finally {
        await svc.app.server.close();
      }
    });
  });

  describe('bodies that are not UTF-8, a declared charset, a limit with spaces', () => {
    /** Bytes that are no UTF-8 (an overlong `/`, a byte UTF-8 never uses), which a lenient decoder makes U+FFFD. */
    const notUtf8 = (before: string, after: string) => Buffer.concat([Buffer.from(before), Buffer.from([0xc0, 0xaf, 0xff]), Buffer.from(after)]);

    it('refuses a REST body that is not UTF-8 with 400 invalid_json, and one declared in another charset with 415, creating nothing', async () => {
      const before = await counts();
      const bytes = await svc.app.inject({
        method: 'POST', url: '/v1/sites', payload: notUtf8('{"name":"', '"}'), headers: { ...svc.auth, 'content-type': 'application/json' },
      });
      expect(expectEnvelope(bytes, 400, 'invalid_json').message).toMatch(/not valid UTF-8/);
      for (const charset of ['latin1', 'ISO-8859-1', 'utf-16', '"windows-1252"']) {
        const res = await svc.app.inject({
          method: 'POST', url: '/v1/sites', payload: '{"name":"cafe"}', headers: { ...svc.auth, 'content-type': `application/json; charset=${charset}` },
        });
        expect(expectEnvelope(res, 415, 'unsupported_media_type').message, charset).toMatch(/UTF-8/);
      }
      expect(await counts()).toBe(before);
      // UTF-8, declared or not, is taken.
      for (const contentType of ['application/json; charset=utf-8', 'application/json; charset=UTF8', 'application/json']) {
        const res = await svc.app.inject({ method: 'POST', url: '/v1/sites', payload: '{"name":"café"}', headers: { ...svc.auth, 'content-type': contentType } });
        expect(res.statusCode, contentType).toBe(201);
        expect(res.json().name).toBe('café');
      }
    });

    it('refuses a signed report whose body is not UTF-8, so two such reports can never read as one customer_event_id', async () => {
      const before = await counts();
      for (const tail of [[0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80]]) {
        const payload = Buffer.concat([Buffer.from('{"customer_event_id":"u-'), Buffer.from(tail), Buffer.from('","allow_uncorrelated":true}')]);
        const request = signedReport(svc.site.site_key, 'signup', null, SECRET);
        const signature = generateTestSignatureHeader({ secret: SECRET, path: request.url, body: payload });
        const res = await svc.app.inject({ ...request, payload, headers: { ...request.headers, [SIGNATURE_HEADER]: signature } });
        expect(expectEnvelope(res, 400, 'invalid_json').message).toMatch(/not valid UTF-8/);
      }
      expect(await counts()).toBe(before);
    });

    it('refuses a snapshot and a form post that are not UTF-8, storing nothing', async () => {
      const before = await counts();
      const snapshot = await svc.app.inject({
        method: 'POST', url: snapshotsPath(svc.site.site_key), payload: notUtf8(JSON.stringify(snapshotBody()).slice(0, -1) + ',"x":"', '"}'),
        headers: { origin: 'https://example.com', 'content-type': SNAPSHOT_CONTENT_TYPE },
      });
      expectEnvelope(snapshot, 400, 'invalid_json');
      const form = await svc.app.inject({
        method: 'POST', url: '/handoffs/hof_no_such_token', payload: notUtf8('pixel_id=', ''), headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.statusCode).toBe(400);
      expect(form.body).toMatch(/not valid UTF-8/);
      expect(await counts()).toBe(before);
    });

    it('refuses a JSON-RPC body for the agent tools that is not UTF-8, as a JSON-RPC parse error', async () => {
      const res = await svc.app.inject({
        method: 'POST', url: '/mcp', payload: notUtf8('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"', '"}}'),
        headers: { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: .*not valid UTF-8/) } });
    });

    it("refuses a limit written with spaces around its digits, as any value that is not just digits", async () => {
      for (const url of ['/v1/sites?limit=%205', '/v1/sites?limit=5%20', '/v1/sites?limit=+5']) expectEnvelope(await rest('GET', url), 400, 'parameter_invalid', 'limit');
      expect((await rest('GET', '/v1/sites?limit=5')).statusCode).toBe(200);
    });
  });

  describe('keys a JSON body must not carry', () => {
    it('refuses a top-level __proto__ key with 400 parameter_unknown, like every other unknown key, changing nothing', async () => {
      const site = await insertSite(svc.db, svc.accountId, { name: 'proto' });
      const res = await rest('PATCH', `/v1/sites/${site.id}`, '{"name":"changed","__proto__":{"name":"polluted"}}');
      expectEnvelope(res, 400, 'parameter_unknown', '__proto__');
      const [row] = await svc.db.query<{ name: string }>('select name from sites where id = $1', [site.id]);
      expect(row!.name).toBe('proto');
      expect(({} as { name?: string }).name).toBeUndefined();
    });

    it('refuses a __proto__ key nested in a free-form object (a destination config), creating nothing', async () => {
      const before = await counts();
      const payload = `{"site_id":"${svc.site.id}","name":"f","trigger_config":{"integrationId":"html","pageFilter":"all"},` +
        '"actions_config":[{"integrationId":"google-ads","config":{"__proto__":{"admin":true}}}]}';
      expectEnvelope(await rest('POST', '/v1/flows', payload), 400, 'parameter_unknown', 'actions_config[0].config.__proto__');
      expect(await counts()).toBe(before);
    });

    it.each(['__proto__', 'constructor'])('refuses a query parameter named %s with 400 parameter_unknown', async (name) => {
      expectEnvelope(await rest('GET', `/v1/sites?${name}=1`), 400, 'parameter_unknown', name);
    });

    it('refuses a NUL inside a key of a free-form object with 400 invalid_json (PostgreSQL jsonb cannot store it)', async () => {
      const before = await counts();
      const payload = `{"site_id":"${svc.site.id}","name":"f","trigger_config":{"integrationId":"html","pageFilter":"all"},` +
        '"actions_config":[{"integrationId":"google-ads","config":{"a\\u0000b":1}}]}';
      const { message } = expectEnvelope(await rest('POST', '/v1/flows', payload), 400, 'invalid_json', 'actions_config[0].config.a\\u0000b');
      expect(message).toMatch(/NUL/);
      expect(await counts()).toBe(before);
    });

    it('refuses JSON nested deeper than any real request with 400 invalid_json', async () => {
      const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
      const payload = `{"site_id":"${svc.site.id}","name":"f","trigger_config":{"integrationId":"html","pageFilter":"all"},` +
        `"actions_config":[{"integrationId":"google-ads","config":${deep}}]}`;
      const before = await counts();
      expectEnvelope(await rest('POST', '/v1/flows', payload), 400, 'invalid_json');
      expect(await counts()).toBe(before);
    });
  });

  describe('names and labels with control characters', () => {
    it.each([
      ['POST', '/v1/sites', '{"name":"Shop\\r\\nInjected"}', 'name'],
      ['POST', '/v1/sites', '{"name":"\\u001b]0;pwned\\u0007Shop"}', 'name'],
      ['POST', '/v1/sites', '{"name":"Shop\\u009b2J"}', 'name'],
      ['PATCH', '/v1/sites/SITE', '{"name":"Tab\\there"}', 'name'],
      ['POST', '/v1/flows', '{"site_id":"SITE","name":"Flow\\u001b[2J","trigger_config":{"integrationId":"html","pageFilter":"all"},"actions_config":[{"integrationId":"google-ads","config":{}}]}', 'name'],
    ] as const)('%s %s with %s is 400 naming %s, changing nothing', async (method, url, payload, param) => {
      const before = await counts();
      const res = await rest(method, url.replace('SITE', svc.site.id), payload.replace('SITE', svc.site.id));
      const { message } = expectEnvelope(res, 400, 'parameter_invalid', param);
      expect(message).toContain('one line of text, not blank, without control characters');
      expect(await counts()).toBe(before);
      const [site] = await svc.db.query<{ name: string }>('select name from sites where id = $1', [svc.site.id]);
      expect(site!.name).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    });

    it('keeps names in any script, with spaces, quotes and emoji', async () => {
      const res = await rest('POST', '/v1/sites', JSON.stringify({ name: 'Boutique « été » — 東京 🛍' }));
      expect(res.statusCode, res.body).toBe(201);
    });
  });

  describe('site domains whose host is not a host name', () => {
    it.each([
      'https://*.example.com',
      'https://example.com;x',
      'https://example..com',
      'https://example.com\\',
      'https://exa\tmple.com',
      'https://exa\nmple.com',
      'https://example.com:0',
      'https://-example.com',
      'https://example.com/\n',
      'ftp\u0000://example.com',
    ])('refuses %j with 400 naming domain, storing nothing and echoing no control character', async (domain) => {
      const site = await insertSite(svc.db, svc.accountId, { domain: 'https://keep.example' });
      const res = await rest('PATCH', `/v1/sites/${site.id}`, JSON.stringify({ domain }));
      expect(res.statusCode, res.body).toBe(400);
      const error = res.json().error;
      expect(error.param).toBe('domain');
      expect(error.message).not.toMatch(CONTROL);
      const [row] = await svc.db.query<{ domain: string }>('select domain from sites where id = $1', [site.id]);
      expect(row!.domain).toBe('https://keep.example');
    });

    it('still stores real origins in canonical form', async () => {
      const site = await insertSite(svc.db, svc.accountId);
      for (const [domain, stored] of [
        ['https://Sub_domain.Example.com', 'https://sub_domain.example.com'],
        ['http://[::1]:8080', 'http://[::1]:8080'],
        ['https://example.com.', 'https://example.com'],
        ['https://example.com:65535', 'https://example.com:65535'],
      ]) {
        const res = await rest('PATCH', `/v1/sites/${site.id}`, JSON.stringify({ domain }));
        expect(res.json().domain, domain).toBe(stored);
      }
    });
  });

  describe('other values PostgreSQL would refuse', () => {
    // A snapshot's rows reach the store as one JSON parameter (collector/sql.ts), and PostgreSQL's json refuses a
    // \u0000 escape: a NUL anywhere in a snapshot is refused on its own before it, never a 500 and never a lost batch.
    it.each([
      ['page_url', 'page_url', (b: Snapshot): Snapshot => ({ ...b, page_url: 'https://www.example.com/signNULup' })],
      ['referrer', 'referrer', (b: Snapshot): Snapshot => ({ ...b, referrer: 'https://www.google.com/NUL' })],
      ['trigger', 'trigger', (b: Snapshot): Snapshot => ({ ...b, trigger: 'formNULsubmit' as Snapshot['trigger'] })],
      ['a click id', 'touch.click_ids.gclid', (b: Snapshot): Snapshot => ({ ...b, touch: { ...b.touch!, click_ids: { gclid: 'Cj0NULx' } } })],
      ['a utm value', 'touch.utm.utm_source', (b: Snapshot): Snapshot => ({ ...b, touch: { ...b.touch!, utm: { utm_source: 'gooNULgle' } } })],
      ['a cookie name', 'cookies._f\\u0000bp', (b: Snapshot): Snapshot => ({ ...b, cookies: { _fNULbp: 'fb.1.2' } as Snapshot['cookies'] })],
      ['a cookie value', 'cookies._fbp', (b: Snapshot): Snapshot => ({ ...b, cookies: { _fbp: 'fb.1.NUL2' } })],
    ])('a NUL in a snapshot %s is 400 invalid_json naming it, and nothing is stored', async (_where, param, damage) => {
      const body = snapshotBody();
      const text = JSON.stringify(damage(body)).replaceAll('NUL', '\\u0000');
      const res = await svc.app.inject({
        method: 'POST', url: snapshotsPath(svc.site.site_key), headers: { origin: ORIGIN, 'content-type': SNAPSHOT_CONTENT_TYPE }, payload: text,
      });
      expectEnvelope(res, 400, 'invalid_json', param);
      expect(await findSnapshot(svc.db, svc.site.id, body.correlation_token)).toBeNull();
    });

    it('user agents with quotes, backslashes, a tab and Latin-1 letters are stored as they came, sent together', async () => {
      const bodies = [snapshotBody(), snapshotBody(), snapshotBody()];
      const agents = ['Mozilla/5.0 \u00ff\u00e9 "quoted" \\ back\tslash', 'plain', '{"a":[1]}'];
      const answers = await Promise.all(bodies.map((body, i) => svc.app.inject({
        method: 'POST', url: snapshotsPath(svc.site.site_key),
        headers: { origin: ORIGIN, 'content-type': SNAPSHOT_CONTENT_TYPE, 'user-agent': agents[i]! },
        payload: JSON.stringify(body),
      })));
      for (const res of answers) expect(res.statusCode, res.body).toBe(204);
      for (const [i, body] of bodies.entries()) {
        expect((await findSnapshot(svc.db, svc.site.id, body.correlation_token))!.user_agent).toBe(agents[i]);
      }
    });

    it.each(['2026-01-01T00:00:00+23:00', '0000-01-01T00:00:00Z'])('a snapshot occurred_at of %s is 400 naming it', async (occurredAt) => {
      const body = snapshotBody({ occurred_at: occurredAt });
      const res = await svc.app.inject({
        method: 'POST', url: snapshotsPath(svc.site.site_key), headers: { origin: ORIGIN, 'content-type': SNAPSHOT_CONTENT_TYPE },
        payload: JSON.stringify(body),
      });
      expectEnvelope(res, 400, 'parameter_invalid', 'occurred_at');
      expect(await findSnapshot(svc.db, svc.site.id, body.correlation_token)).toBeNull();
    });

    it('an unknown id with a control character is never quoted raw in the 404', async () => {
      const res = await rest('GET', '/v1/sites/site_%E2%80%A8x');
      expect(res.statusCode).toBe(404);
      expect(res.json().error.message).toContain('\\u2028');
    });

    it('a limit written as anything but decimal digits is refused, not coerced', async () => {
      for (const limit of ['1e1', '0x10', '10.0', 'true']) expectEnvelope(await rest('GET', `/v1/sites?limit=${limit}`), 400, 'parameter_invalid', 'limit');
      expect((await rest('GET', '/v1/sites?limit=10')).statusCode).toBe(200);
    });
  });
});
