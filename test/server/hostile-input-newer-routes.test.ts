/**
 * Hostile input on the routes added for revenue, erasure and notifications: the signed later-stage and adjustment
 * webhooks, POST /v1/erasures and POST /v1/notification_endpoints. Whatever arrives (a NUL byte, a lone surrogate, a
 * nested object where a string belongs, a body that is not JSON, a huge one), the answer is a 4xx with the error
 * envelope, its message free of control characters and of the value sent, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, setSiteDomain } from './support/fixtures';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { adjustmentPath, conversionPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';

const SECRET = 'whsec_hostile_input_newer_routes_0123456789';
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The hostile values: each where a string belongs. */
const HOSTILE: Array<[string, unknown]> = [
  ['a NUL byte', 'ada\u0000@example.com'],
  ['a lone surrogate', 'ada\ud800@example.com'],
  ['a nested object', { a: { b: { c: ['d'] } } }],
  ['a number', 12],
  ['a string of 100,000 characters', 'x'.repeat(100_000)],
];

function expectRefused(res: LightMyRequestResponse, sent?: string): void {
  expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, res.body).toBeLessThan(500);
  const { error } = res.json() as { error: { type: string; code: string; message: string } };
  expect(typeof error.type).toBe('string');
  expect(typeof error.code).toBe('string');
  expect(error.message).not.toMatch(CONTROL);
  if (sent) expect(res.body).not.toContain(sent);
}

describe.each(DATABASE_KINDS)('hostile input on the newer routes on $name', (kind) => {
  let svc: RestService;
  let stageOk: LightMyRequestResponse;
  const counts = async () =>
    JSON.stringify(
      await svc.db.query(
        `select (select count(*)::int from reports) as reports, (select count(*)::int from events) as events,
                (select count(*)::int from adjustments) as adjustments, (select count(*)::int from erasures) as erasures,
                (select count(*)::int from notification_endpoints) as endpoints`,
      ),
    );
  const signed = (url: string, payload: string) =>
    svc.app.inject({
      method: 'POST', url, payload,
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: SECRET, path: url, body: payload }) },
    });
  const rest = (url: string, payload: string) =>
    svc.app.inject({ method: 'POST', url, payload, headers: { ...svc.auth, 'content-type': 'application/json' } });

  beforeAll(async () => {
    svc = await createRestService(kind);
    await setSiteDomain(svc.db, svc.site.id, 'https://example.com');
    await connectApiTrigger(svc.db, svc.site, SECRET);
    await insertApiFlow(svc.db, svc.site, { triggerKey: 'signup' });
    await insertApiFlow(svc.db, svc.site, { triggerKey: 'paid', triggerType: 'conversion' });
    // The report the adjustments below name, so only their values can be what is refused.
    stageOk = await signed(conversionPath(svc.site.site_key, 'paid'), JSON.stringify({ customer_event_id: 'stage-ok', customer_id: 'cus_ok', value: 29, currency: 'EUR', allow_uncorrelated: true }));
  });
  afterAll(() => svc.close());

  it('the routes answer well-formed input (so the refusals below are about the values, not a missing flow or report)', async () => {
    expect(stageOk.statusCode, stageOk.body).toBe(200);
    const adjustment = await signed(adjustmentPath(svc.site.site_key), JSON.stringify({ adjustment_id: 'adj-ok', customer_event_id: 'stage-ok', type: 'restate', value: 10, currency: 'EUR' }));
    expect(adjustment.statusCode, adjustment.body).toBe(200);
    const erasure = await rest('/v1/erasures', JSON.stringify({ email: 'nobody@example.com' }));
    expect(erasure.statusCode, erasure.body).toBe(200);
  });

  describe.each(HOSTILE)('%s', (_label, value) => {
    const sent = typeof value === 'string' && value.length < 100 ? value : undefined;

    it('in the later-stage webhook (customer_id, currency, occurred_at) is refused and writes nothing', async () => {
      const before = await counts();
      for (const field of ['customer_id', 'customer_event_id', 'currency', 'occurred_at', 'email']) {
        const body = { customer_event_id: 'stage-1', customer_id: 'cus_1', value: 29, currency: 'EUR', allow_uncorrelated: true, [field]: value };
        expectRefused(await signed(conversionPath(svc.site.site_key, 'paid'), JSON.stringify(body)), sent);
      }
      expect(await counts()).toBe(before);
    });

    it('in the adjustment webhook (adjustment_id, type, currency) is refused and writes nothing', async () => {
      const before = await counts();
      for (const field of ['adjustment_id', 'customer_event_id', 'type', 'currency', 'occurred_at']) {
        const body = { adjustment_id: 'adj-1', customer_event_id: 'stage-ok', type: 'restate', value: 10, currency: 'EUR', [field]: value };
        expectRefused(await signed(adjustmentPath(svc.site.site_key), JSON.stringify(body)), sent);
      }
      expect(await counts()).toBe(before);
    });

    it('in an erasure (email, phone, customer_id) is refused and writes nothing', async () => {
      const before = await counts();
      for (const field of ['email', 'phone', 'customer_id']) {
        expectRefused(await rest('/v1/erasures', JSON.stringify({ [field]: value })), sent);
      }
      expect(await counts()).toBe(before);
    });

    it('in a notification endpoint (url, kinds) is refused and writes nothing', async () => {
      const before = await counts();
      expectRefused(await rest('/v1/notification_endpoints', JSON.stringify({ url: value, kinds: ['event.failed'] })), sent);
      expectRefused(await rest('/v1/notification_endpoints', JSON.stringify({ url: 'https://hooks.example.com/cnv', kinds: [value] })), sent);
      expect(await counts()).toBe(before);
    });
  });

  it('a body that is not JSON, or JSON nested 10,000 deep, is refused on every newer route', async () => {
    const before = await counts();
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    for (const payload of ['{"customer_id": "cus_1"', '\u0000', deep]) {
      expectRefused(await signed(conversionPath(svc.site.site_key, 'paid'), payload));
      expectRefused(await signed(adjustmentPath(svc.site.site_key), payload));
      expectRefused(await rest('/v1/erasures', payload));
      expectRefused(await rest('/v1/notification_endpoints', payload));
    }
    expect(await counts()).toBe(before);
  });
});
