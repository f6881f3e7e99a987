/**
 * The agent tools over /mcp given hostile arguments: every tool of the list called with arguments that are not an
 * object, and with each argument (and an unknown one) replaced by each of some twenty hostile values (wrong types, NUL
 * bytes, lone surrogates, 20,000 characters, 2,000 items, dates PostgreSQL cannot hold). No call is answered -32603
 * Internal error or carries the API's internal_error: arguments that are not an object are -32602 Invalid params (the
 * SDK's Protocol answered them -32603 with a schema dump before), a bad value is the tool's error with the API's
 * envelope (an id holding a lone surrogate made encodeURIComponent throw: -32603 "URI malformed" before).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, setSiteDomain } from './support/fixtures';

const HOSTILE: readonly unknown[] = [
  null, true, -1, 0, 1.5, 1e308, '', ' ', 'a\u0000b', 'a\ud800b', 'x'.repeat(20_000), [], {}, [[[]]], { a: {} },
  '9999-12-31T23:59:59Z', '294277-01-01T00:00:00Z', 'NaN', '../x', "' or 1=1", Array.from({ length: 2000 }, (_, i) => `v${i}`),
];

let svc: RestService;
let nextId = 1;
beforeAll(async () => {
  svc = await createRestService(DATABASE_KINDS[0]!, { CNV_RATE_LIMITS: 'off' });
  await setSiteDomain(svc.db, svc.site.id, 'https://example.com');
  await connectApiTrigger(svc.db, svc.site, 'whsec_mcp_hostile_arguments_0123456789');
  await insertApiFlow(svc.db, svc.site, { triggerKey: 'signup' });
});
afterAll(() => svc.close());

/** One JSON-RPC call over the streamable HTTP transport: the HTTP status, the JSON-RPC answer and its raw text. */
async function rpc(method: string, params: unknown): Promise<{ status: number; answer: any; raw: string }> {
  const res = await svc.app.inject({
    method: 'POST', url: '/mcp', payload: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    headers: { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  });
  const event = /^data: (.*)$/m.exec(res.body);
  return { status: res.statusCode, answer: JSON.parse(event ? event[1]! : res.body), raw: res.body };
}

/** A value of a JSON Schema: the first of an enum, the minimum of a number, `abc` for text; objects with their required properties. */
function exampleOf(schema: any): unknown {
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return exampleOf(schema.anyOf.find((s: any) => s.type !== 'null') ?? schema.anyOf[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'object') {
    const required: string[] = schema.required ?? [];
    return Object.fromEntries(Object.entries<any>(schema.properties ?? {}).filter(([key]) => required.includes(key)).map(([key, value]) => [key, exampleOf(value)]));
  }
  if (type === 'array') return [exampleOf(schema.items)];
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return true;
  return 'abc';
}

it('answers every tool\'s hostile arguments as invalid params or the tool\'s error, never as an internal error', async () => {
  const { answer } = await rpc('tools/list', {});
  const tools = answer.result.tools as Array<{ name: string; inputSchema: any }>;
  expect(tools.length).toBeGreaterThanOrEqual(10);
  const faults: string[] = [];
  let calls = 0;
  for (const tool of tools) {
    const base = exampleOf(tool.inputSchema) as Record<string, unknown>;
    if ('site_id' in base) base.site_id = svc.site.id;
    for (const notAnObject of [null, [], 'x', 1]) {
      const { answer: refused } = await rpc('tools/call', { name: tool.name, arguments: notAnObject });
      calls++;
      if (refused.error?.code !== -32602) faults.push(`${tool.name} arguments ${JSON.stringify(notAnObject)}: ${JSON.stringify(refused).slice(0, 200)}`);
    }
    for (const key of [...Object.keys(tool.inputSchema.properties ?? {}), 'unknown_key']) {
      for (const hostile of HOSTILE) {
        const { status, answer: called, raw } = await rpc('tools/call', { name: tool.name, arguments: { ...base, [key]: hostile } });
        calls++;
        if (status >= 500 || called.error?.code === -32603 || /internal_error/.test(raw)) {
          faults.push(`${tool.name} ${key}=${JSON.stringify(hostile).slice(0, 40)}: ${status} ${raw.slice(0, 200)}`);
        }
      }
    }
  }
  expect(calls).toBeGreaterThan(800);
  expect(faults).toEqual([]);
}, 120_000);

it('still runs a well-formed call', async () => {
  const { answer } = await rpc('tools/call', { name: 'list_sites', arguments: {} });
  expect(answer.result.isError).toBeUndefined();
  // The account's sites, the first one and those create_site made of the hostile values it accepted (honor_gpc: true).
  const stored = await svc.db.query<{ id: string }>('select id from sites where account_id = $1 order by seq', [svc.accountId]);
  expect(stored[0]!.id).toBe(svc.site.id);
  expect(answer.result.structuredContent.data.map((site: { id: string }) => site.id)).toEqual(stored.map((site) => site.id));
});

it("refuses an id of `.` or `..` (which would name another route once the path is normalized) and an id that is no string", async () => {
  const { answer } = await rpc('tools/list', {});
  const withIds = (answer.result.tools as Array<{ name: string; inputSchema: any }>).filter((tool) => 'id' in (tool.inputSchema.properties ?? {}));
  expect(withIds.map((tool) => tool.name)).toEqual(expect.arrayContaining(['get_event', 'publish_flow', 'redeliver_event']));
  for (const tool of withIds) {
    const base = exampleOf(tool.inputSchema) as Record<string, unknown>;
    for (const id of ['.', '..', 5, {}]) {
      const { raw, answer: called } = await rpc('tools/call', { name: tool.name, arguments: { ...base, id } });
      const refusal = `${tool.name} id=${JSON.stringify(id)}: ${raw.slice(0, 300)}`;
      // Refused before any request: as invalid params by the schema, or as the tool's own parameter_invalid on `id`.
      if (called.error) expect(called.error.code, refusal).toBe(-32602);
      else {
        expect(called.result.isError, refusal).toBe(true);
        expect(called.result.structuredContent?.error ?? JSON.parse(called.result.content[0].text).error, refusal).toMatchObject({ code: 'parameter_invalid', param: 'id' });
      }
      expect(raw, refusal).not.toContain('route_not_found');
    }
  }
});

it('refuses, on every tool, an argument its input schema does not declare, as update_site does (parameter_unknown)', async () => {
  const { answer } = await rpc('tools/list', {});
  const tools = answer.result.tools as Array<{ name: string; inputSchema: any }>;
  const refusals: Record<string, unknown> = {};
  for (const tool of tools) {
    expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
    const base = exampleOf(tool.inputSchema) as Record<string, unknown>;
    const { answer: called } = await rpc('tools/call', { name: tool.name, arguments: { ...base, undeclared_argument: 1 } });
    refusals[tool.name] = called.result?.isError && called.result.structuredContent.error;
  }
  const expected = {
    type: 'invalid_request_error', code: 'parameter_unknown', param: 'undeclared_argument',
    message: expect.stringMatching(/^Unknown parameter: undeclared_argument\. Allowed here: /),
  };
  expect(refusals).toEqual(Object.fromEntries(tools.map((tool) => [tool.name, expected])));

  // Arguments that a REST route would take but the tool's schema left out, or that the tool sets itself.
  const draft = await insertApiFlow(svc.db, svc.site, { triggerKey: 'undeclared', status: 'draft' });
  const handoff = await rpc('tools/call', { name: 'connect_trigger_source', arguments: {} });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['list_sites', { ending_before: svc.site.id }, 'ending_before'],
    ['list_flows', { ending_before: draft }, 'ending_before'],
    ['list_events', { ending_before: '2024-01-01T00:00:00Z' }, 'ending_before'],
    ['connect_destination', { destination_type: 'meta', purpose: 'connect_trigger_source' }, 'purpose'],
    ['get_handoff', { id: handoff.answer.result.structuredContent.id, extra: 1 }, 'extra'],
    ['publish_flow', { id: draft, foo: 'bar' }, 'foo'],
  ];
  for (const [name, args, param] of cases) {
    const { answer: called } = await rpc('tools/call', { name, arguments: args });
    expect(called.result.structuredContent.error, `${name} ${JSON.stringify(args)}`).toMatchObject({ code: 'parameter_unknown', param });
  }
  const rows = await svc.db.query<{ status: string }>('select status from flows where id = $1', [draft]);
  expect(rows[0]!.status).toBe('draft');
});

it('answers a NUL character in an argument as the tool’s error naming it, as over stdio, and an unreadable message as JSON-RPC', async () => {
  const { status, answer } = await rpc('tools/call', { name: 'update_site', arguments: { id: svc.site.id, name: 'a\u0000b' } });
  expect(status).toBe(200);
  expect(answer.result.isError).toBe(true);
  expect(answer.result.structuredContent.error).toMatchObject({ code: 'invalid_json', param: 'name' });
  expect((await svc.db.query<{ name: string }>('select name from sites where id = $1', [svc.site.id]))[0]!.name).not.toContain('\u0000');

  const headers = { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  for (const payload of ['{"jsonrpc":', '', '[' .repeat(40) + ']'.repeat(40), Buffer.from([0x7b, 0xff, 0x7d])]) {
    const res = await svc.app.inject({ method: 'POST', url: '/mcp', payload, headers });
    expect(res.statusCode, String(payload)).toBe(400);
    expect(res.json(), String(payload)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: /) } });
  }
  // The key is still checked first: a missing one is the REST 401, whatever the body.
  const unauthenticated = await svc.app.inject({ method: 'POST', url: '/mcp', payload: '{"jsonrpc":', headers: { 'content-type': 'application/json' } });
  expect(unauthenticated.statusCode).toBe(401);
});

it('answers a number beyond a double (1e999) in an argument as the tool’s error naming it, creating nothing', async () => {
  const count = async () => (await svc.db.query<{ n: number }>('select count(*)::int as n from flows'))[0]!.n;
  const before = await count();
  // Written as text: JSON.stringify cannot write 1e999 (it writes Infinity as null).
  const args = `{"site_id":"${svc.site.id}","name":"f","trigger_config":{"integrationId":"html","pageFilter":"all"},"actions_config":[{"integrationId":"google-ads","config":{"conversion":{"id":"1"},"n":1e999}}]}`;
  const res = await svc.app.inject({
    method: 'POST', url: '/mcp', payload: `{"jsonrpc":"2.0","id":${nextId++},"method":"tools/call","params":{"name":"create_flow","arguments":${args}}}`,
    headers: { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  });
  expect(res.statusCode).toBe(200);
  const event = /^data: (.*)$/m.exec(res.body);
  const answer = JSON.parse(event ? event[1]! : res.body);
  expect(answer.result.isError).toBe(true);
  expect(answer.result.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'actions_config[0].config.n' });
  expect(await count()).toBe(before);
});

it('answers a name with a control character (a line break, an escape sequence) as the tool’s error naming it, changing nothing', async () => {
  const name = async () => (await svc.db.query<{ name: string }>('select name from sites where id = $1', [svc.site.id]))[0]!.name;
  const before = await name();
  for (const bad of ['Shop\r\nInjected', 'Shop\u001b]0;owned\u0007', 'Shop\u009b2J']) {
    const { answer } = await rpc('tools/call', { name: 'update_site', arguments: { id: svc.site.id, name: bad } });
    expect(answer.result.isError, JSON.stringify(bad)).toBe(true);
    expect(answer.result.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
  }
  expect(await name()).toBe(before);
});

it('says what to change in a tools/call whose params are not a name and an object of arguments, with one "MCP error" prefix', async () => {
  const cases: Array<[unknown, string]> = [
    [{ name: 'list_sites', arguments: null }, "The arguments of tools/call 'list_sites' must be an object of the tool's parameters ({} when it takes none); got null."],
    [{ name: 'get_flow', arguments: ['flow_x'] }, "The arguments of tools/call 'get_flow' must be an object of the tool's parameters ({} when it takes none); got an array."],
    [{ name: 'list_sites', arguments: '{}' }, "The arguments of tools/call 'list_sites' must be an object of the tool's parameters ({} when it takes none); got a string."],
    [{ arguments: {} }, "A tools/call needs params.name, the tool's name as a string; got nothing."],
    [{ name: 7, arguments: {} }, "A tools/call needs params.name, the tool's name as a string; got a number."],
  ];
  // The message on the wire carries no "MCP error -32602: " (an SDK client adds one); it used to, before a schema dump.
  for (const [params, message] of cases) {
    const { status, answer } = await rpc('tools/call', params);
    expect([status, answer.error]).toEqual([200, { code: -32602, message }]);
  }
  // A call without arguments is still one without parameters.
  const { answer } = await rpc('tools/call', { name: 'list_sites' });
  expect(answer.result.isError).toBeUndefined();
  expect(answer.result.structuredContent.data[0].id).toBe(svc.site.id);
});

it('answers a message over the body limit as JSON-RPC naming the limit, as the SDK transport does, and leaves other errors to the app', async () => {
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'update_site', arguments: { id: svc.site.id, name: 'x'.repeat(1_100_000) } } });
  const headers = { ...svc.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const tooLarge = await svc.app.inject({ method: 'POST', url: '/mcp', payload: big, headers });
  expect(tooLarge.statusCode).toBe(413);
  expect(tooLarge.json()).toEqual({
    jsonrpc: '2.0', id: null,
    error: { code: -32000, message: 'Payload Too Large: Request body must not exceed 1048576 bytes: send smaller arguments.' },
  });
  const xml = await svc.app.inject({ method: 'POST', url: '/mcp', payload: '<call/>', headers: { ...headers, 'content-type': 'application/xml' } });
  expect(xml.statusCode).toBe(415);
  expect(xml.json().error).toMatchObject({ code: 'unsupported_media_type' });
});
