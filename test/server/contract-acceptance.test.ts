/**
 * Outside acceptance checks of the written contracts (shared/spec/service-interface.md and the "(contract)" parts of
 * DESIGN.md) where the service or its OpenAPI document drifted from them once. Each check is stated in the contract's
 * words and reads the service only through its public surfaces: REST, the signed webhook, GET /v1/openapi.json.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow } from './support/fixtures';
import { adjustmentPath, saasSignupPath } from '../../src/protocol/webhook';

const SECRET = 'whsec_contract_acceptance_0123456789';

/** A request signed per the spec's signing rules, written out here rather than taken from the service's own helper. */
function signed(path: string, body: string): { method: 'POST'; url: string; headers: Record<string, string>; payload: string } {
  const t = Math.floor(Date.now() / 1000);
  const hex = createHmac('sha256', SECRET).update(`${t}.POST.${path}.${body}`).digest('hex');
  return { method: 'POST', url: path, headers: { 'content-type': 'application/json', 'x-service-signature': `t=${t},v1=${hex}` }, payload: body };
}

describe.each(DATABASE_KINDS)('contract acceptance on $name', (kind) => {
  let svc: RestService;
  let doc: {
    tags: Array<{ name: string; description?: string }>;
    paths: Record<string, Record<string, { tags?: string[]; responses: Record<string, { description: string }> }>>;
  };
  beforeAll(async () => {
    svc = await createRestService(kind);
    await connectApiTrigger(svc.db, { id: svc.site.id, account_id: svc.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: svc.site.id, account_id: svc.accountId }, { triggerKey: 'signup' });
    doc = (await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  });
  afterAll(() => svc.close());

  // DESIGN.md, Value, later stages and adjustments: "an unknown `customer_event_id` is 404"; The REST API's
  // description: the document holds "every ... response and error of the spec and of our choices".
  it('answers an adjustment of an unknown customer_event_id 404, and its OpenAPI operation says so', async () => {
    const reported = await svc.app.inject(signed(saasSignupPath(svc.site.site_key, 'signup'), JSON.stringify({ correlation_token: null, customer_event_id: 'known_1' })));
    expect(reported.statusCode).toBe(200);
    const unknown = await svc.app.inject(signed(adjustmentPath(svc.site.site_key), JSON.stringify({ adjustment_id: 'adj_unknown', customer_event_id: 'never_reported', type: 'retract' })));
    expect(unknown.statusCode).toBe(404);
    expect(errorOf(unknown)).toMatchObject({ type: 'not_found_error', code: 'resource_missing', param: 'customer_event_id' });
    const known = await svc.app.inject(signed(adjustmentPath(svc.site.site_key), JSON.stringify({ adjustment_id: 'adj_known', customer_event_id: 'known_1', type: 'retract' })));
    expect(known.statusCode).toBe(200);
    expect(known.json()).toEqual({ status: 'accepted', adjustment_id: 'adj_known', events: 1 });

    const notFound = doc.paths['/api/webhook-bridge/adjustment/{site_key}']!.post!.responses['404']!.description;
    expect(notFound).toContain('site_not_found');
    expect(notFound).toContain('resource_missing');
    expect(notFound).toContain('customer_event_id');
  });

  // DESIGN.md, The REST API's description: every REST path is in the document, which /docs/api renders as a reference
  // page. Its sections (and a generated client's API classes) are the operations' tags: each one is declared with a
  // description, in the same words as the others (notification endpoints were once "Notification_endpoints", undeclared).
  it('declares, with a description, every tag its operations use: the notification endpoints too', () => {
    const declared = new Map(doc.tags.map((tag) => [tag.name, tag.description ?? '']));
    const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.tags ?? [])));
    for (const tag of used) {
      expect(declared.has(tag), `tag ${tag} is used but not declared`).toBe(true);
      expect(declared.get(tag)!.length, `tag ${tag} has no description`).toBeGreaterThan(0);
      expect(tag, 'a tag is words, not a path segment').not.toMatch(/[_/]/);
    }
    expect(doc.paths['/v1/notification_endpoints']!.post!.tags).toEqual(['Notification endpoints']);
  });
});
