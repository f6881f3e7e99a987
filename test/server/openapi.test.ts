/**
 * The REST API's description (DESIGN.md, "The REST API's description"): GET /v1/openapi.json, without a key, is a valid
 * OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator against the official 3.1 schema), documents every
 * /v1 route and the webhook with a success answer, the error envelope and their security scheme, and the answers the
 * service really gives (sites, handoffs, flows, events, destinations, errors, the webhook) match the document's response
 * schemas (Ajv, JSON Schema 2020-12), with no undocumented field where the document lists an object's fields.
 */
import type { LightMyRequestResponse } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, newToken, signedReport, snapshotBody } from './support/fixtures';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, any>>;
  components: { securitySchemes: Record<string, any> };
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

describe('the OpenAPI document', () => {
  let svc: RestService;
  let doc: Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const checked: string[] = [];

  /** Checks a real answer against the document: its status is documented, and its body matches that schema. */
  function conforms(method: string, url: string, response: LightMyRequestResponse): void {
    const { template, operation } = operationFor(doc, method, url);
    const documented = operation.responses[String(response.statusCode)];
    expect(documented, `${method} ${template} answered ${response.statusCode}, which the document does not list`).toBeDefined();
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
    svc = await createRestService(DATABASE_KINDS[0]!);
    const res = await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('is served without a key and is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
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

  it('declares what a generated client meets: redeliver\'s 409, optional bodies as optional, publish\'s other 400s, names', () => {
    const post = (path: string): any => (doc.paths as Record<string, any>)[path].post;
    expect(post('/v1/events/{id}/redeliver').responses['409'].description).toMatch(/nothing_to_redeliver.*event_erased/);
    expect(post('/v1/destinations/{id}/test').requestBody.required).toBe(false);
    expect(post('/v1/dashboard/sign-in-links').requestBody.required).toBe(false);
    expect(post('/v1/sites').requestBody.required).toBe(true);
    expect(post('/v1/flows/{id}/publish').responses['400'].content['application/json'].schema.anyOf).toHaveLength(2);
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((op) => op.operationId));
    for (const id of ['listSites', 'createSite', 'getSite', 'updateSite', 'publishFlow', 'redeliverEvent', 'testDestination', 'deleteNotificationEndpoint', 'reportSignup', 'reportAdjustment']) {
      expect(ids).toContain(id);
    }
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

    const events = await call('GET', '/v1/events?limit=5');
    const event = events.json().data[0];
    expect(event.customer_event_id).toBe('user_openapi');
    await call('GET', `/v1/events/${event.id}`);
    await call('GET', `/v1/events?site_id=${site.id}&status=queued`);

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
    expect(sources.every((s) => s.startsWith('/'))).toBe(true);
    for (const source of sources.filter((s) => s.startsWith('/docs/api/'))) {
      const asset = await svc.app.inject({ method: 'GET', url: source });
      expect(asset.statusCode, source).toBe(200);
      expect(asset.body.length).toBeGreaterThan(100);
    }
    expect((await svc.app.inject({ method: 'GET', url: '/docs/api/nothing.js' })).statusCode).toBe(404);
  });
});
