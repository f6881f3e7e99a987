/**
 * Hostile input in every field of every body the service reads: each writing route's valid body (answered 2xx first,
 * so the refusals are about the values), then that body with one value at any depth (or an unknown key beside it)
 * replaced by each of some seventy hostile values: wrong types, NUL bytes, lone surrogates, 20,000-character strings,
 * 2,000-item arrays, deep nesting, numbers at the edges of a double, dates PostgreSQL cannot hold or JavaScript reads
 * differently, URLs and emails that only look like ones. The same for the list filters' query values. Whatever arrives,
 * the answer is below 500, and a 4xx carries the error envelope with a message free of control characters.
 * About 12,000 requests per store; the hand-written hostile-input tests say what each refusal must be.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, newToken, setSiteDomain, snapshotBody } from './support/fixtures';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { adjustmentPath, conversionPath, saasSignupPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { snapshotsPath } from '../../src/protocol/collector';
import { upsertDestination } from '../../src/server/destinations/sql';

const SECRET = 'whsec_every_field_test_secret_0123456789';
const ORIGIN = 'https://www.example.com';
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Stands for a value nested 20,000 deep, spliced into the body's text (JSON.stringify would not nest that far). */
const DEEP_MARKER = 'deep-value-marker-7f3a';

const HOSTILE: readonly unknown[] = [
  // types
  null, true, false, [], {}, [[[]]], { a: { b: {} } }, [null], [1, 'a', {}], Array.from({ length: 2000 }, (_, i) => `v${i}`),
  // numbers
  -1, 0, 1.5, 1e308, -1e308, 2 ** 53 + 1, -0.0000001, 1e-300, 123456789.123456789,
  // strings PostgreSQL or JavaScript cannot take as they are
  '', ' ', 'a\u0000b', 'a\ud800b', 'x'.repeat(20_000), '😀'.repeat(100), '\u202e', '\ufeff', '1'.repeat(400),
  '-1', '0x10', '1e400', 'NaN', 'Infinity', '-infinity', 'infinity', '../../etc', '%00', "' or 1=1--",
  // dates
  '1970-01-01', '2026-02-30', '2026-13-45T99:99:99Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '294277-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z', '-000001-01-01T00:00:00Z', '2026-11-26T10:00:00+25:00', '2026-11-26T10:00:00.1234567890123Z',
  // URLs, emails, phones, currencies
  'https://', 'javascript:alert(1)', 'http://[::1', 'http://127.0.0.1:0/', 'https://example.com:99999/', 'https://a..b/',
  `${'a'.repeat(300)}@example.com`, 'ada@example.com\n', ' ADA@EXAMPLE.COM ', '+1 (555) 0100', '+'.repeat(50),
  'eur', 'XXX', 'EUR\u0000',
];

/** A query value as text: strings as they are, the rest as JSON. A lone surrogate cannot be percent-encoded: sent as its bytes. */
function queryValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

describe.each(DATABASE_KINDS)('hostile input in every field on $name', (kind) => {
  let svc: RestService;
  /** Answers of 500 or more, and 4xx answers without a proper envelope, each with what was sent. */
  const faults: string[] = [];
  let sent = 0;

  beforeAll(async () => {
    svc = await createRestService(kind, { CNV_RATE_LIMITS: 'off' });
    await connectApiTrigger(svc.db, svc.site, SECRET);
    await insertApiFlow(svc.db, svc.site, { triggerKey: 'signup' });
    await insertApiFlow(svc.db, svc.site, { triggerKey: 'paid', triggerType: 'conversion' });
  });
  afterAll(() => svc.close());

  function check(label: string, res: LightMyRequestResponse, payload: string | undefined): LightMyRequestResponse {
    sent++;
    const what = `${label} ${String(payload).slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
    if (res.statusCode >= 500) faults.push(what);
    else if (res.statusCode >= 400) {
      let error: { type?: unknown; code?: unknown; message?: unknown } | undefined;
      try {
        error = (res.json() as { error?: typeof error }).error;
      } catch {
        error = undefined;
      }
      if (typeof error?.type !== 'string' || typeof error.code !== 'string' || typeof error.message !== 'string' || CONTROL.test(error.message)) {
        faults.push(`no clean envelope: ${what}`);
      }
    }
    return res;
  }

  const rest = async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, raw?: string) => {
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const res = await svc.app.inject({
      method, url,
      headers: { ...svc.auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload }),
    });
    return check(`${method} ${url}`, res, payload);
  };
  const signed = async (url: string, body: unknown, raw?: string) => {
    const payload = raw ?? JSON.stringify(body);
    const signature = generateTestSignatureHeader({ secret: SECRET, path: url, body: payload });
    const res = await svc.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature } });
    return check(`POST ${url}`, res, payload);
  };
  const beacon = async (url: string, body: unknown, raw?: string) => {
    const payload = raw ?? JSON.stringify(body);
    const res = await svc.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'text/plain', origin: ORIGIN } });
    return check(`POST ${url}`, res, payload);
  };

  /**
   * Sends `base` (which must be answered 2xx), then every copy of it with one value, at any depth, or an unknown key
   * beside the others, replaced by each hostile value and by arrays nested 20,000 deep
   * (PGlite, given jsonb nested 10,000 deep, answers no rows, and a statement after that can spin for ever: the body's
   * reader refuses nesting beyond 32 before anything reaches the store), then `base` again.
   */
  async function everyField(base: Record<string, unknown>, send: (body: unknown, raw?: string) => Promise<LightMyRequestResponse>): Promise<void> {
    const first = await send(base);
    expect(first.statusCode, first.body).toBeLessThan(300);
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const visit = async (value: unknown, rebuild: (changed: unknown) => unknown): Promise<void> => {
      if (value === null || typeof value !== 'object') return;
      const keys: Array<string | number> = Array.isArray(value) ? value.map((_, i) => i) : [...Object.keys(value), 'unknown_key'];
      for (const key of keys) {
        const replaced = (next: unknown) => {
          const copy: any = Array.isArray(value) ? [...value] : { ...value };
          copy[key] = next;
          return rebuild(copy);
        };
        for (const hostile of HOSTILE) await send(replaced(hostile));
        await send(undefined, JSON.stringify(replaced(DEEP_MARKER)).replace(JSON.stringify(DEEP_MARKER), deep));
        await visit((value as any)[key], replaced);
      }
    };
    await visit(base, (changed) => changed);
    const last = await send(base);
    expect(last.statusCode, last.body).toBeLessThan(300);
  }

  it('is never answered 5xx, and every refusal carries the error envelope', async () => {
    const { site } = svc;
    await setSiteDomain(svc.db, site.id, 'https://example.com');
    // The REST API.
    await everyField({ name: 'Shop', domain: 'https://www.shop.example' }, (body, raw) => rest('POST', '/v1/sites', body, raw));
    await everyField({ name: 'Shop 2', domain: 'https://example.com' }, (body, raw) => rest('PATCH', `/v1/sites/${site.id}`, body, raw));
    await everyField({ purpose: 'connect_destination', destination_type: 'tiktok' }, (body, raw) => rest('POST', '/v1/handoffs', body, raw));
    await everyField({ purpose: 'connect_trigger_source', site_id: site.id }, (body, raw) => rest('POST', '/v1/handoffs', body, raw));
    const actions = [
      { integrationId: 'reddit', config: {} },
      { integrationId: 'tiktok', config: { event_name: 'CompleteRegistration' } },
      { integrationId: 'google-ads', config: { conversion_action_id: '123' } },
    ];
    const flow = { site_id: site.id, name: 'Signups', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'every' }, actions_config: actions };
    const created = await rest('POST', '/v1/flows', flow);
    await everyField(flow, (body, raw) => rest('POST', '/v1/flows', body, raw));
    await everyField({ name: 'Renamed', actions_config: actions }, (body, raw) => rest('PATCH', `/v1/flows/${created.json().id}`, body, raw));
    await everyField({ email: 'ada@example.com', phone: '+15550100', customer_id: 'cus_1' }, (body, raw) => rest('POST', '/v1/erasures', body, raw));
    await everyField({ url: 'https://hooks.example.com/cnv', kinds: ['event.failed'] }, (body, raw) => rest('POST', '/v1/notification_endpoints', body, raw));
    const destination = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' }, null);
    await everyField(
      { site_id: site.id, flow_id: created.json().id, occurred_after: '2026-11-01T00:00:00Z', limit: 10 },
      (body, raw) => rest('POST', `/v1/destinations/${destination.id}/redeliver`, body, raw),
    );
    // The signed webhooks.
    await everyField(
      {
        customer_event_id: 'every-1', correlation_token: newToken(), email: 'ada@example.com', phone: '+15550100', first_name: 'Ada',
        last_name: 'Lovelace', occurred_at: new Date().toISOString(), value: 10, currency: 'EUR', customer_id: 'cus_1',
      },
      (body, raw) => signed(saasSignupPath(site.site_key, 'signup'), body, raw),
    );
    await everyField(
      { customer_event_id: 'paid-1', customer_id: 'cus_1', value: 29, currency: 'EUR', allow_uncorrelated: true },
      (body, raw) => signed(conversionPath(site.site_key, 'paid'), body, raw),
    );
    await everyField(
      { adjustment_id: 'adj-1', customer_event_id: 'paid-1', type: 'restate', value: 10, currency: 'EUR' },
      (body, raw) => signed(adjustmentPath(site.site_key), body, raw),
    );
    // The collector (the PATCH above may have cleared the domain the beacons' origin needs).
    await setSiteDomain(svc.db, site.id, 'https://example.com');
    await everyField({ ...snapshotBody() }, (body, raw) => beacon(snapshotsPath(site.site_key), body, raw));
    const { correlation_token, occurred_at, page_url, touch, cookies } = snapshotBody();
    await everyField(
      { submission_id: newToken(), integration: 'html', form_id: 'signup', correlation_token, occurred_at, page_url, touch, cookies, fields: { email: 'ada@example.com' } },
      (body, raw) => beacon(snapshotsPath(site.site_key).replace(/snapshots$/, 'form-submissions'), body, raw),
    );
    // The list filters.
    for (const name of ['site_id', 'limit', 'starting_after', 'ending_before', 'status', 'flow_id', 'trigger_key', 'created_gte', 'created_lte']) {
      for (const hostile of HOSTILE) {
        await rest('GET', `/v1/events?site_id=${site.id}&${name}=${queryValue(hostile)}`);
        await rest('GET', `/v1/flows?site_id=${site.id}&${name}=${queryValue(hostile)}`);
        await rest('GET', `/v1/sites?${name}=${queryValue(hostile)}`);
        await rest('GET', `/v1/erasures?${name}=${queryValue(hostile)}`);
      }
    }
    expect(sent).toBeGreaterThan(10_000);
    expect(faults).toEqual([]);
  }, 300_000);
});
