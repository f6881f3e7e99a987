/**
 * The REST API's description (DESIGN.md, "The REST API's description"): GET /v1/openapi.json, without a key, is a valid
 * OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator against the official 3.1 schema, every schema
 * compiled by Ajv as JSON Schema 2020-12), documents every /v1 route and the webhook with a success answer, the error
 * envelope and their security scheme, and the answers the service really gives (sites, handoffs, flows, events,
 * destinations, errors, the webhook, a rate limit's 429) match the document's response schemas and headers, with no
 * undocumented field where the document lists an object's fields. What a generated client needs besides: Retry-After
 * as a declared header, shared schemas in components (every $ref resolving, every error the one envelope), no
 * parameter a route refuses whatever its value, and no if/then/else (a choice of shapes that agrees with the service).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, newToken, signedReport, snapshotBody } from './support/fixtures';
import { adjustmentPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { ErrorEnvelope } from '../../src/server/http/schemas';
import { dereferenced, shareSchemas } from '../../src/server/openapi/components';

/** The webhook's per-site limit of the service under test: the 429 check sends one more, to a key nothing else uses. */
const WEBHOOK_PER_SITE = 20;

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, any>>;
  components: { securitySchemes: Record<string, any>; schemas: Record<string, any> };
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** The operation of the document that serves a request, found by matching the path against the templates. */
function operationFor(doc: Doc, method: string, url: string): { template: string; operation: any } {
  const path = url.split('?')[0]!;
  for (const [template, item] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path) && item[method.toLowerCase()]) return { template, operation: item[method.toLowerCase()] };
  }
  throw new Error(`${method} ${path} is not in the document`);
}

/**
 * The schema made strict for the conformance check: an object that lists its properties and says nothing about others
 * refuses others, so a field the service sends and the document does not describe fails the test (the document itself
 * stays as generated: objects that pass data through say additionalProperties: true).
 */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, strict(v)])) : strict(value);
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/** Every operation of a document, as `METHOD path` and the operation. */
function operationsOf(doc: Doc): Array<[string, any]> {
  return Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m): [string, any] => [`${m.toUpperCase()} ${path}`, item[m]]));
}

/** Every object (and array) inside a value, with its JSON pointer. */
function* nodesOf(value: unknown, pointer = ''): Generator<[string, any]> {
  if (value === null || typeof value !== 'object') return;
  yield [pointer, value];
  for (const [key, inner] of Object.entries(value)) yield* nodesOf(inner, `${pointer}/${key}`);
}

/** The JSON of a value with its keys sorted. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('the OpenAPI document', () => {
  let svc: RestService;
  /** The document as served. */
  let raw: Doc;
  /** The same with every $ref replaced by its target: what the document describes, written out. */
  let doc: Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const checked: string[] = [];

  /** Checks a real answer against the document: its status is documented, and its body matches that schema. */
  function conforms(method: string, url: string, response: LightMyRequestResponse): void {
    const { template, operation } = operationFor(doc, method, url);
    const documented = operation.responses[String(response.statusCode)];
    expect(documented, `${method} ${template} answered ${response.statusCode}, which the document does not list`).toBeDefined();
    // A header a client must act on is declared where it is sent.
    if (response.headers['retry-after'] !== undefined) {
      expect(documented.headers?.['Retry-After'], `${method} ${template} ${response.statusCode} sends Retry-After`).toBeDefined();
      expect(ajv.validate(documented.headers['Retry-After'].schema, Number(response.headers['retry-after']))).toBe(true);
    }
    if (response.headers['www-authenticate'] !== undefined) {
      expect(documented.headers?.['WWW-Authenticate'], `${method} ${template} ${response.statusCode} sends WWW-Authenticate`).toBeDefined();
    }
    const schema = documented.content?.['application/json']?.schema;
    expect(schema, `${method} ${template} ${response.statusCode} has no JSON schema`).toBeDefined();
    const validate = ajv.compile(strict(schema) as object);
    const body = response.json();
    const ok = validate(body);
    expect(ok ? [] : validate.errors, `${method} ${template} ${response.statusCode}: ${JSON.stringify(body).slice(0, 400)}`).toEqual([]);
    checked.push(`${method} ${template} ${response.statusCode}`);
  }

  async function call(method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, headers: Record<string, string> = svc.auth) {
    const response = await svc.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
    conforms(method, url, response);
    return response;
  }

  beforeAll(async () => {
    // The limits' windows on a clock that stands still: the count up to the limit below never crosses a window's edge.
    const windowsClock = Date.parse('2026-01-01T00:00:30Z');
    svc = await createRestService(DATABASE_KINDS[0]!, { CNV_RATE_LIMIT_WEBHOOK_PER_SITE: String(WEBHOOK_PER_SITE) }, undefined, undefined, { rateLimitNow: () => windowsClock });
    const res = await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    raw = res.json();
    doc = dereferenced(raw);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('is served without a key and is a valid OpenAPI 3.1 document whose every schema is valid JSON Schema 2020-12', async () => {
    expect(raw.openapi).toBe('3.1.0');
    const result = await new Validator().validate(raw as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // The validator checks the document's structure; Ajv compiles each schema (the components, and each schema of
    // each operation as the components make it).
    const schemas = [
      ...Object.values(doc.components.schemas),
      ...operationsOf(doc).flatMap(([, op]) => [
        ...(op.parameters ?? []).map((p: any) => p.schema),
        op.requestBody?.content['application/json']?.schema,
        ...Object.values(op.responses).flatMap((r: any) => [r.content?.['application/json']?.schema, ...Object.values(r.headers ?? {}).map((h: any) => h.schema)]),
      ]),
    ].filter(Boolean);
    const strictAjv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(strictAjv);
    for (const schema of schemas) expect(() => strictAjv.compile(schema)).not.toThrow();
    expect(schemas.length).toBeGreaterThan(100);
  });

  it('declares the 408 of a request that does not arrive whole in time on every operation', () => {
    const missing = operationsOf(raw).filter(([, op]) => !op.responses['408']).map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('declares the refusals of any path on every operation: 414 path_too_long, 431 headers_too_large (and 400 invalid_path)', async () => {
    const missing = operationsOf(raw).flatMap(([name, op]) =>
      ([['414', 'path_too_long'], ['431', 'headers_too_large']] as const)
        .filter(([status, code]) => !String(op.responses[status]?.description ?? '').includes(code))
        .map(([status]) => `${name} ${status}`),
    );
    expect(missing).toEqual([]);
    expect(raw.paths['/v1/sites']!.get.responses['400'].description).toContain('invalid_path');
    const long = await svc.app.inject({ method: 'GET', url: `/v1/sites/${'x'.repeat(101)}`, headers: svc.auth });
    conforms('GET', `/v1/sites/${'x'.repeat(101)}`, long);
    expect(long.json().error.code).toBe('path_too_long');
    expect((raw as Doc & { info: { description: string } }).info.description).toContain('405 method_not_allowed');
  });

  it('declares Retry-After (whole seconds, at least 1) on every 429 and 503 of every operation', () => {
    const problems: string[] = [];
    for (const [name, op] of operationsOf(raw)) {
      // Every operation may meet the store's trouble (503); the webhook's also has rate limits (429).
      const expected = name.includes(' /api/webhook-bridge/') ? ['429', '503'] : ['503'];
      for (const status of expected) if (!op.responses[status]) problems.push(`${name}: no ${status}`);
      for (const status of ['429', '503'].filter((s) => op.responses[s])) {
        const header = op.responses[status].headers?.['Retry-After'];
        if (!header) problems.push(`${name} ${status}: no Retry-After header`);
        else {
          expect(header.schema, `${name} ${status}`).toEqual({ type: 'integer', minimum: 1 });
          expect(header.description, `${name} ${status}`).toMatch(/seconds/i);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("declares the Bearer challenge (WWW-Authenticate) on the 401 of every /v1 operation, none on the signed webhook's", async () => {
    const problems: string[] = [];
    for (const [name, op] of operationsOf(raw)) {
      const header = op.responses['401']?.headers?.['WWW-Authenticate'];
      const webhook = name.includes(' /api/webhook-bridge/');
      if (!op.responses['401']) problems.push(`${name}: no 401`);
      else if (webhook === (header !== undefined)) problems.push(`${name}: ${webhook ? 'a' : 'no'} WWW-Authenticate header`);
    }
    expect(problems).toEqual([]);
    await call('GET', '/v1/sites', undefined, {});
    await call('GET', `/v1/sites/${svc.site.id}`, undefined, { authorization: 'Bearer cnv_sk_unknown' });
  });

  it('says what each success answer means (no generator default such as "Default Response")', () => {
    const said = new Map<string, string>();
    for (const [name, op] of operationsOf(raw)) {
      for (const [status, answer] of Object.entries<any>(op.responses)) {
        if (!/^2/.test(status)) continue;
        expect(answer.description, `${name} ${status}`).not.toMatch(/default response/i);
        said.set(`${name} ${status}`, answer.description);
      }
    }
    expect(said.get('POST /v1/sites 201')).toBe('Created.');
    expect(said.get('GET /v1/events 200')).toBe('One page of the list.');
    expect(said.get('DELETE /v1/notification_endpoints/{id} 200')).toBe('Deleted.');
    expect([...said].find(([key]) => key.startsWith('POST /api/webhook-bridge/saas-signup/'))?.[1]).toMatch(/^Stored/);
  });

  it('keeps shared schemas in components: every $ref resolves, every error is the one envelope, nothing repeats inline', () => {
    // Every $ref points into components.schemas, at a schema that is there.
    const refs = [...nodesOf(raw)].filter(([, node]) => typeof node.$ref === 'string').map(([, node]) => node.$ref as string);
    expect(refs.length).toBeGreaterThan(100);
    for (const ref of new Set(refs)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(raw.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
    // The error envelope is one component, exactly the TypeBox schema the service's errors are built to.
    expect(raw.components.schemas.Error).toEqual(JSON.parse(JSON.stringify(ErrorEnvelope)));
    const envelope = '#/components/schemas/Error';
    const errors: string[] = [];
    for (const [name, op] of operationsOf(raw)) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue;
        const schema = response.content?.['application/json']?.schema;
        // The envelope, or a choice of bodies each of which is a named envelope (publish's 400: flow_invalid or another).
        const ok = schema?.$ref === envelope || (Array.isArray(schema?.anyOf) && schema.anyOf.some((s: any) => s.$ref === envelope) && schema.anyOf.every((s: any) => typeof s.$ref === 'string'));
        if (!ok) errors.push(`${name} ${status}: ${JSON.stringify(schema).slice(0, 120)}`);
      }
    }
    expect(errors).toEqual([]);
    // The records are components; no object schema is written out in two operations, and no titled one in any.
    for (const name of ['Site', 'SiteFields', 'Handoff', 'Flow', 'TriggerConfig', 'Event', 'EventAction', 'Destination', 'Erasure', 'NotificationEndpoint']) {
      expect(raw.components.schemas[name], name).toBeDefined();
    }
    const seen = new Map<string, Set<string>>();
    for (const [name, op] of operationsOf(raw)) {
      for (const [pointer, node] of nodesOf(op)) {
        if (typeof node.title === 'string' && !Array.isArray(node)) errors.push(`${name} ${pointer}: titled schema ${node.title} inline`);
        if (node.type !== 'object' || !node.properties || Object.keys(node.properties).length === 0) continue;
        const { description: _d, ...shape } = node;
        const key = canonical(shape);
        seen.set(key, (seen.get(key) ?? new Set()).add(name));
      }
    }
    const repeated = [...seen].filter(([, ops]) => ops.size > 1).map(([key, ops]) => `${key.slice(0, 120)} in ${[...ops].join(', ')}`);
    expect([...errors, ...repeated]).toEqual([]);
    // Sharing never changes what the document says: written out again, the shared document is the one it was made from.
    const inline = dereferenced(raw);
    const shared = JSON.parse(JSON.stringify({ ...inline, components: { ...inline.components, schemas: {} } }));
    shareSchemas(shared, {});
    expect(Object.keys(shared.components.schemas).length).toBeGreaterThan(10);
    expect(dereferenced(shared).paths).toEqual(inline.paths);
  });

  it('does not offer the events list\'s ending_before, says it is refused, and the service refuses it so', async () => {
    const parameters = [...nodesOf(raw.paths)].filter(([pointer]) => /\/parameters\/\d+$/.test(pointer)).map(([, p]) => p);
    // No parameter a generated client would offer that no value can satisfy.
    expect(parameters.filter((p) => p.schema?.not !== undefined)).toEqual([]);
    const list = raw.paths['/v1/events']!.get;
    expect(list.parameters.map((p: any) => p.name)).not.toContain('ending_before');
    expect(list.parameters.map((p: any) => p.name)).toContain('starting_after');
    expect(list.description).toMatch(/ending_before.*400 parameter_unsupported/);
    // The other lists walk both ways.
    expect(raw.paths['/v1/sites']!.get.parameters.find((p: any) => p.name === 'ending_before')?.schema.type).toBe('string');
    const refused = await call('GET', '/v1/events?ending_before=2026-01-01T00:00:00Z');
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'parameter_unsupported', param: 'ending_before' });
  });

  it('lists limit, starting_after and ending_before on every list but events (the spec\'s Pagination)', () => {
    const lists = operationsOf(doc).filter(([name, op]) => {
      const properties = op.responses?.['200']?.content?.['application/json']?.schema?.properties ?? {};
      return name.startsWith('GET ') && name !== 'GET /v1/events' && 'data' in properties && 'has_more' in properties && 'next_cursor' in properties;
    });
    expect(lists.map(([name]) => name)).toEqual(expect.arrayContaining(['GET /v1/sites', 'GET /v1/flows', 'GET /v1/destinations']));
    for (const [name, op] of lists) {
      const parameters = Object.fromEntries((op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => [p.name, p.schema]));
      expect({ name, limit: parameters.limit }).toEqual({ name, limit: expect.objectContaining({ type: 'integer', minimum: 1, maximum: 1000 }) });
      expect({ name, starting_after: parameters.starting_after?.type, ending_before: parameters.ending_before?.type }).toEqual({ name, starting_after: 'string', ending_before: 'string' });
    }
  });

  it('writes no if/then/else: the flow trigger and the handoff body are choices of named shapes that agree with the service', async () => {
    const conditionals = [...nodesOf(raw)].filter(([, node]) => !Array.isArray(node) && ('if' in node || 'then' in node || 'else' in node)).map(([pointer]) => pointer);
    expect(conditionals).toEqual([]);
    const handoffBody = raw.paths['/v1/handoffs']!.post.requestBody.content['application/json'].schema;
    expect(handoffBody.oneOf).toEqual([{ $ref: '#/components/schemas/ConnectDestinationBody' }, { $ref: '#/components/schemas/ConnectTriggerSourceBody' }]);
    expect(handoffBody.discriminator).toEqual({
      propertyName: 'purpose',
      mapping: { connect_destination: '#/components/schemas/ConnectDestinationBody', connect_trigger_source: '#/components/schemas/ConnectTriggerSourceBody' },
    });
    for (const path of ['/v1/flows', '/v1/flows/{id}']) {
      const item = raw.paths[path]!;
      const body = (item.post ?? item.patch).requestBody.content['application/json'].schema;
      expect(body.properties.trigger_config).toEqual({ $ref: '#/components/schemas/TriggerConfig' });
    }
    const trigger = raw.components.schemas.TriggerConfig;
    expect(trigger.oneOf).toEqual([{ $ref: '#/components/schemas/ApiTriggerConfig' }, { $ref: '#/components/schemas/FormTriggerConfig' }]);
    expect(trigger.description).toContain('Checked as ApiTriggerConfig when it has type, or it has key, or its integrationId is "api"; otherwise as FormTriggerConfig.');

    // What the document accepts is what the service accepts, body by body (Ajv over the document's schema).
    const site = svc.site;
    const actions = [{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }];
    const samples: Array<{ url: string; body: Record<string, unknown> }> = [
      { url: '/v1/handoffs', body: { purpose: 'connect_destination', destination_type: 'meta' } },
      { url: '/v1/handoffs', body: { purpose: 'connect_trigger_source', trigger_source: 'api', site_id: site.id } },
      { url: '/v1/handoffs', body: { purpose: 'connect_trigger_source' } },
      { url: '/v1/handoffs', body: { purpose: 'connect_destination' } },
      { url: '/v1/handoffs', body: { purpose: 'connect_trigger_source', destination_type: 'meta' } },
      { url: '/v1/handoffs', body: { purpose: 'nothing' } },
      { url: '/v1/handoffs', body: { destination_type: 'meta' } },
      ...[
        { type: 'saas_signup', integrationId: 'api', key: 'signup' },
        { type: 'conversion', integrationId: 'api', key: 'trial_started' },
        { integrationId: 'gravity-forms', pageFilter: 'all' },
        { type: 'saas_signup', integrationId: 'api' },
        { integrationId: 'api', key: 'signup' },
        { type: 'purchase', integrationId: 'api', key: 'signup' },
        { type: 'saas_signup', integrationId: 'hubspot', key: 'signup' },
        { integrationId: 'gravity-forms' },
        { integrationId: 'gravity-forms', pageFilter: 'all', key: 'signup' },
        'api',
      ].map((trigger_config) => ({ url: '/v1/flows', body: { site_id: site.id, name: 'Sample', trigger_config, actions_config: actions } })),
    ];
    const disagreements: string[] = [];
    for (const { url, body } of samples) {
      const schema = doc.paths[url]!.post.requestBody.content['application/json'].schema;
      const documented = ajv.validate(schema, body);
      const answer = await svc.app.inject({ method: 'POST', url, headers: svc.auth, payload: body });
      expect([200, 201, 400], `${url} ${JSON.stringify(body)}: ${answer.body}`).toContain(answer.statusCode);
      if (documented !== (answer.statusCode < 300)) disagreements.push(`${url} ${JSON.stringify(body)}: document ${documented}, service ${answer.statusCode}`);
    }
    expect(disagreements).toEqual([]);
    // The one body the choice of shapes lets through and the service refuses is the one the rule in words names: a
    // form trigger whose integrationId is "api" is checked as the API trigger.
    const apiForm = { site_id: site.id, name: 'Sample', trigger_config: { integrationId: 'api', pageFilter: 'all' }, actions_config: actions };
    expect(ajv.validate(doc.paths['/v1/flows']!.post.requestBody.content['application/json'].schema, apiForm)).toBe(true);
    expect((await svc.app.inject({ method: 'POST', url: '/v1/flows', headers: svc.auth, payload: apiForm })).statusCode).toBe(400);
  });

  it('documents every REST path of the spec and the webhook, with their security schemes', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /v1/sites', 'POST /v1/sites', 'GET /v1/sites/{id}', 'PATCH /v1/sites/{id}',
        'POST /v1/handoffs', 'GET /v1/handoffs/{id}',
        'GET /v1/flows', 'POST /v1/flows', 'GET /v1/flows/{id}', 'PATCH /v1/flows/{id}', 'POST /v1/flows/{id}/publish', 'POST /v1/flows/{id}/unpublish',
        'GET /v1/events', 'GET /v1/events/{id}',
        'GET /v1/destinations', 'GET /v1/destinations/{id}', 'POST /v1/destinations/{id}/test',
        'POST /api/webhook-bridge/saas-signup/{site_key}/{trigger_key}',
      ]),
    );
    // Nothing else: no hosted page, collector, dashboard page or MCP endpoint.
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/v1/') || p.startsWith('/api/webhook-bridge/'))).toBe(true);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    const signature = doc.components.securitySchemes.webhookSignature;
    expect(signature).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Service-Signature' });
    expect(signature.description).toContain('{t}.POST.{path}.{body}');
    const webhook = doc.paths['/api/webhook-bridge/saas-signup/{site_key}/{trigger_key}']!.post;
    expect(webhook.security).toEqual([{ webhookSignature: [] }]);
    // correlation_token may be left out (null then), so only customer_event_id is required.
    expect(webhook.requestBody.content['application/json'].schema.required).toEqual(['customer_event_id']);
    expect(Object.keys(webhook.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '413']));
  });

  it('is what the docs describe: every operation is named in docs/, and every /v1 route the docs name is an operation', () => {
    const root = resolve(import.meta.dirname, '../..');
    const pages = ['README.md', 'ARCHITECTURE.md', ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const operations = new Set(operationsOf(doc).map(([operation]) => operation));
    /** `METHOD path` with each parameter as `{}`: `site_…`, `{id}` and `{site_key}` alike. */
    const shape = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}|[a-z]+_…/g, '{}')}`;
    const documented = new Set([...operations].map((operation) => shape(...(operation.split(' ') as [string, string]))));
    const named = new Set<string>();
    const unknown: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8');
      // A webhook path may follow its base (`POST {webhook_base_url}/api/webhook-bridge/…`). A line about 405 names
      // methods a path is not served with (`DELETE /v1/sites/{id}`).
      text.split('\n').forEach((line, index) => {
        for (const m of line.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (?:\{\w+\})?(\/(?:v1|api\/webhook-bridge)\/[\w{}…\/.:-]*[\w}…])/g)) {
          const route = shape(m[1]!, m[2]!);
          named.add(route);
          if (!documented.has(route) && m[2] !== '/v1/openapi.json' && !m[2]!.includes(':') && !/\b405\b/.test(line)) unknown.push(`${page}:${index + 1}: ${m[0]}`);
        }
      });
      // A route written across a line break ("`GET\n/v1/…`") is named too.
      for (const m of text.replace(/\s+/g, ' ').matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (?:\{\w+\})?(\/(?:v1|api\/webhook-bridge)\/[\w{}…\/.-]*[\w}…])/g)) named.add(shape(m[1]!, m[2]!));
    }
    expect(unknown).toEqual([]);
    expect([...documented].filter((operation) => !named.has(operation)).sort()).toEqual([]);
  });

  it("gives docs/api.md's records and answers the fields the document gives them", () => {
    const api = readFileSync(resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');
    const fieldsOf = (name: string) => Object.keys(doc.components.schemas[name]!.properties).sort();
    const wrong: string[] = [];
    // The record examples ("The Handoff record:" and a JSON block), whole records: every field, no other.
    const records: Record<string, string> = { site_: 'Site', hdf_: 'Handoff', flow_: 'Flow', era_: 'Erasure' };
    const examples = [...api.matchAll(/```json\n([\s\S]*?)```/g), ...api.matchAll(/The Site record: `(\{[^`]+\})`/g)].map((m) => m[1]!);
    let compared = 0;
    for (const example of examples) {
      const record = JSON.parse(example.replaceAll('…', '')) as Record<string, unknown>;
      const name = Object.entries(records).find(([prefix]) => String(record.id ?? '').startsWith(prefix))?.[1];
      if (!name) continue;
      compared++;
      const shown = Object.keys(record).sort();
      if (JSON.stringify(shown) !== JSON.stringify(fieldsOf(name))) wrong.push(`the ${name} record shows ${shown.join(', ')}; the document has ${fieldsOf(name).join(', ')}`);
    }
    expect(compared).toBe(4);
    // An answer written as its fields (`POST /v1/destinations/{id}/test` → `{"destination", "ok", …, "error"?}`).
    const bullets = api.replace(/\n {2,}/g, ' ').split('\n').filter((line) => /^- `(GET|POST|PATCH|DELETE) \/v1\//.test(line));
    let shapes = 0;
    for (const bullet of bullets) {
      const [, method, path] = /^- `(\w+) (\S+?)`/.exec(bullet)!;
      const shape = /→ `(\{"[^`]+\})`/.exec(bullet)?.[1];
      if (!shape) continue;
      shapes++;
      const operation = doc.paths[path!]![method!.toLowerCase()];
      const schema = (operation.responses['200'] ?? operation.responses['201']).content['application/json'].schema;
      const shown = [...shape.matchAll(/"(\w+)"/g)].map((m) => m[1]!).sort();
      const documented = Object.keys(schema.properties).sort();
      if (JSON.stringify(shown) !== JSON.stringify(documented)) wrong.push(`${method} ${path} answers ${shown.join(', ')} in the docs; the document has ${documented.join(', ')}`);
    }
    expect(shapes).toBeGreaterThanOrEqual(2);
    expect(wrong).toEqual([]);
  });

  it('declares what a generated client meets: redeliver\'s 409, optional bodies as optional, publish\'s other 400s, names', () => {
    const post = (path: string): any => (doc.paths as Record<string, any>)[path].post;
    expect(post('/v1/events/{id}/redeliver').responses['409'].description).toMatch(/nothing_to_redeliver.*event_erased/);
    for (const path of ['/api/webhook-bridge/saas-signup/{site_key}/{trigger_key}', '/api/webhook-bridge/conversion/{site_key}/{trigger_key}']) {
      expect(post(path).responses['409'].description, path).toMatch(/customer_event_id_reused/);
    }
    expect(post('/v1/destinations/{id}/test').requestBody.required).toBe(false);
    expect(post('/v1/dashboard/sign-in-links').requestBody.required).toBe(false);
    expect(post('/v1/sites').requestBody.required).toBe(false);
    expect((doc.paths as Record<string, any>)['/v1/sites/{id}'].patch.requestBody.required).toBe(true);
    expect(post('/v1/flows/{id}/publish').responses['400'].content['application/json'].schema.anyOf).toHaveLength(2);
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((op) => op.operationId));
    for (const id of ['listSites', 'createSite', 'getSite', 'updateSite', 'publishFlow', 'redeliverEvent', 'testDestination', 'deleteNotificationEndpoint', 'reportSignup', 'reportAdjustment']) {
      expect(ids).toContain(id);
    }
  });

  it('states that names are one line without control characters, in the pattern and in words, and the service refuses so', async () => {
    const body = (path: string, method: 'post' | 'patch'): any => (doc.paths as Record<string, any>)[path][method].requestBody.content['application/json'].schema;
    const names = [body('/v1/sites', 'post').properties.name, body('/v1/sites/{id}', 'patch').properties.name, body('/v1/flows', 'post').properties.name, body('/v1/flows/{id}', 'patch').properties.name];
    for (const name of names) {
      expect(name.description).toMatch(/one line, without control characters/i);
      const pattern = new RegExp(name.pattern as string, 'u');
      expect(pattern.test('Boutique « été » — 東京')).toBe(true);
      for (const bad of ['a\r\nb', 'a\tb', 'a\u001b[2Jb', 'a\u007fb', 'a\u009bb', '   ']) expect(pattern.test(bad), JSON.stringify(bad)).toBe(false);
    }
    const refused = await svc.app.inject({ method: 'POST', url: '/v1/sites', headers: svc.auth, payload: { name: 'Shop\u001b[2J' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
  });

  it('gives every /v1 route and webhook a documented success answer and the error envelope (routes added later too)', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const codes = Object.keys(operation.responses ?? {});
        const success = codes.filter((c) => c.startsWith('2'));
        if (success.length === 0) missing.push(`${method.toUpperCase()} ${path}: no 2xx response schema (add response: {200: …} to its route)`);
        for (const code of success) {
          if (!operation.responses[code].content?.['application/json']?.schema) missing.push(`${method.toUpperCase()} ${path} ${code}: no JSON schema`);
        }
        for (const code of ['400', '401', '404']) {
          const schema = operation.responses[code]?.content?.['application/json']?.schema;
          // The envelope, or a choice of bodies each of which is one (publish's 400: flow_invalid or another error).
          const envelope = schema?.properties?.error || (Array.isArray(schema?.anyOf) && schema.anyOf.length > 0 && schema.anyOf.every((s: any) => s?.properties?.error));
          if (!envelope) missing.push(`${method.toUpperCase()} ${path} ${code}: no error envelope`);
        }
        if (!operation.operationId) missing.push(`${method.toUpperCase()} ${path}: no operationId`);
      }
    }
    expect(missing).toEqual([]);
    const ids = Object.values(doc.paths).flatMap((item) => METHODS.map((m) => item[m]?.operationId).filter(Boolean));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('matches what the service answers: sites, handoffs, flows, destinations, events, the webhook and errors', async () => {
    const sites = await call('GET', '/v1/sites');
    const site = sites.json().data[0];
    await call('GET', '/v1/sites?limit=1');
    await call('POST', '/v1/sites', { name: 'Second', domain: 'https://shop.example.org' });
    await call('GET', `/v1/sites/${site.id}`);
    await call('PATCH', `/v1/sites/${site.id}`, { domain: 'https://www.example.com' });

    const handoff = await call('POST', '/v1/handoffs', { purpose: 'connect_destination', destination_type: 'meta' });
    await call('GET', `/v1/handoffs/${handoff.json().id}`);
    await call('POST', '/v1/handoffs', { purpose: 'connect_trigger_source', trigger_source: 'api', site_id: site.id });

    const flow = await call('POST', '/v1/flows', {
      site_id: site.id, name: 'Signups', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }],
    });
    const flowId = flow.json().id;
    await call('GET', '/v1/flows');
    await call('GET', `/v1/flows/${flowId}`);
    await call('PATCH', `/v1/flows/${flowId}`, { name: 'Signups (all)' });
    const refused = await call('POST', `/v1/flows/${flowId}/publish`);
    expect(refused.json().error.code).toBe('flow_invalid');
    await call('POST', `/v1/flows/${flowId}/unpublish`);

    await call('GET', '/v1/destinations');

    // A report through the signed webhook, paired with a browser snapshot: then the event lists and reads.
    await connectApiTrigger(svc.db, { id: site.id, account_id: svc.accountId }, 'whsec_openapi_test_secret');
    await svc.db.query(`update flows set status = 'live', published_at = now() where id = $1`, [flowId]);
    const token = newToken();
    const snapshot = await svc.app.inject({
      method: 'POST', url: `/collect/v1/sites/${site.site_key}/snapshots`,
      headers: { origin: 'https://www.example.com', 'content-type': 'text/plain;charset=UTF-8' },
      payload: JSON.stringify(snapshotBody({ correlation_token: token })),
    });
    expect(snapshot.statusCode).toBe(204);
    const reportBody = { correlation_token: token, customer_event_id: 'user_openapi', email: 'ada@example.com', first_name: 'Ada' };
    const report = signedReport(site.site_key, 'signup', reportBody, 'whsec_openapi_test_secret');
    const reported = await svc.app.inject(report);
    conforms('POST', report.url, reported);
    expect(reported.json()).toMatchObject({ status: 'promoted', promoted_count: 1 });
    const unsigned = await svc.app.inject({ ...report, headers: { 'content-type': 'application/json' } });
    conforms('POST', report.url, unsigned);
    expect(unsigned.statusCode).toBe(401);
    const unknownSite = signedReport('no-such-site', 'signup', reportBody, 'whsec_openapi_test_secret');
    conforms('POST', unknownSite.url, await svc.app.inject(unknownSite));
    // Over the per-site limit (a key only this uses): 429 with Retry-After, as documented.
    const limited = signedReport('openapi-rate-limited', 'signup', reportBody, 'whsec_openapi_test_secret');
    for (let i = 0; i < WEBHOOK_PER_SITE; i++) expect((await svc.app.inject(limited)).statusCode).toBe(404);
    const overLimit = await svc.app.inject(limited);
    expect(overLimit.statusCode).toBe(429);
    expect(Number(overLimit.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    conforms('POST', limited.url, overLimit);

    const events = await call('GET', '/v1/events?limit=5');
    const event = events.json().data[0];
    expect(event.customer_event_id).toBe('user_openapi');
    await call('GET', `/v1/events/${event.id}`);
    await call('GET', `/v1/events?site_id=${site.id}&status=queued`);
    // Two restatements, the second dated before the first: the event lists both, the second stored superseded.
    const adjustPath = adjustmentPath(site.site_key);
    for (const [adjustmentId, value, msBefore] of [['adj_openapi_1', 19, 1_000], ['adj_openapi_2', 9, 2_000]] as const) {
      const payload = JSON.stringify({ adjustment_id: adjustmentId, customer_event_id: 'user_openapi', type: 'restate', value, currency: 'EUR', occurred_at: new Date(Date.now() - msBefore).toISOString() });
      const signature = generateTestSignatureHeader({ secret: 'whsec_openapi_test_secret', path: adjustPath, body: payload });
      const adjusted = await svc.app.inject({ method: 'POST', url: adjustPath, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature }, payload });
      conforms('POST', adjustPath, adjusted);
      expect(adjusted.statusCode).toBe(200);
    }
    const adjusted = (await call('GET', `/v1/events/${event.id}`)).json();
    expect(adjusted.adjustments.map((a: { adjustment_id: string; superseded: boolean }) => [a.adjustment_id, a.superseded])).toEqual([['adj_openapi_1', false], ['adj_openapi_2', true]]);
    expect(adjusted).toMatchObject({ current_value: 19, current_currency: 'EUR' });

    // Errors: each is the envelope the document describes.
    await call('GET', '/v1/sites', undefined, {});
    await call('GET', '/v1/sites', undefined, { authorization: 'Bearer cnv_sk_nope' });
    await call('GET', '/v1/sites/site_missing');
    await call('GET', '/v1/sites?limit=0');
    await call('POST', '/v1/sites', { nmae: 'typo' });
    await call('PATCH', `/v1/flows/${flowId}`, { actions_config: [] });
    await call('GET', '/v1/events/evt_missing');
    await call('GET', '/v1/destinations/dst_missing');
    await call('POST', '/v1/destinations/dst_missing/test', {});
    await call('GET', '/v1/handoffs/hdf_missing');
    await call('POST', '/v1/handoffs', { purpose: 'nothing' });

    expect(checked.length).toBeGreaterThan(30);
  });

  it('serves the reference page from the service itself, under a strict CSP, with its own copy of Swagger UI', async () => {
    const page = await svc.app.inject({ method: 'GET', url: '/docs/api' });
    expect(page.statusCode).toBe(200);
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    // Everything from the service itself (the pages' icon is inline, a data: URL).
    expect(sources.filter((s) => !s.startsWith('/') && !s.startsWith('data:image/svg+xml,'))).toEqual([]);
    for (const source of sources.filter((s) => s.startsWith('/docs/api/'))) {
      const asset = await svc.app.inject({ method: 'GET', url: source });
      expect(asset.statusCode, source).toBe(200);
      expect(asset.body.length).toBeGreaterThan(100);
    }
    expect((await svc.app.inject({ method: 'GET', url: '/docs/api/nothing.js' })).statusCode).toBe(404);
    // Names every object has are not assets either (they were a 500).
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      const res = await svc.app.inject({ method: 'GET', url: `/docs/api/${name}` });
      expect(res.statusCode, name).toBe(404);
      expect(res.json().error.code, name).toBe('route_not_found');
    }
  });
});
