import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestService, type TestService } from './support/harness';
import { DATABASE_KINDS } from './support/databases';
import { TEST_SECRET_KEY, connectApiTrigger, insertApiFlow, newToken, setSiteDomain, signedReport, snapshotBody } from './support/fixtures';
import { snapshotsPath } from '../../src/protocol/collector';
import { formatSignatureHeader, saasSignupPath, SIGNATURE_HEADER, WEBHOOK_MAX_BYTES } from '../../src/protocol/webhook';
import { computeSignature, unixSeconds } from '../../src/protocol/hmac-node';
import { buildApp } from '../../src/server/app';
import { loadSettings } from '../../src/server/settings';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { upsertSnapshots } from '../../src/server/collector/sql';
import { PAIRING_WINDOW_MS } from '../../src/server/pairing/pairing';

const SECRET = 'whsec_current_000000000000000000000000';
const OLD_SECRET = 'whsec_previous_00000000000000000000000';
const ORIGIN = 'https://www.example.com';

interface EventRow {
  id: string;
  flow_id: string;
  flow_name: string;
  trigger: string;
  match_quality: string | null;
  email: string | null;
  click_ids: Record<string, string> | null;
  occurred_at: Date;
  data: Record<string, unknown>;
}

async function eventsOf(db: Database, customerEventId: string): Promise<EventRow[]> {
  return db.query<EventRow>(
    `select e.id, e.flow_id, e.flow_name, e.trigger, e.match_quality, e.email, e.click_ids, e.occurred_at, e.data
     from events e join reports r on r.id = e.report_id where r.customer_event_id = $1 order by e.flow_name`,
    [customerEventId],
  );
}

describe('webhook bridge', () => {
  let svc: TestService;
  let site: SiteRow;
  /** Another site of the same account (an app subdomain beside the brand site: the loaders share the token cookie). */
  let otherSite: SiteRow;
  const flowIds: Record<string, string> = {};
  let seq = 0;
  const eventId = () => `user_${++seq}_${Date.now()}`;
  const send = (body: Record<string, unknown>, options: { triggerKey?: string; secret?: string; timestamp?: number } = {}) =>
    svc.app.inject(signedReport(site.site_key, options.triggerKey ?? 'signup', body, options.secret ?? SECRET, options));

  beforeAll(async () => {
    svc = await createTestService();
    site = svc.site;
    await setSiteDomain(svc.db, site.id, 'https://example.com');
    await connectApiTrigger(svc.db, site, SECRET);
    flowIds.a = await insertApiFlow(svc.db, site, { name: 'A signup to Google Ads', triggerKey: 'signup' });
    flowIds.b = await insertApiFlow(svc.db, site, {
      name: 'B signup to two conversions', triggerKey: 'signup',
      actions: [
        { integrationId: 'google-ads', config: { conversion: { id: '111' } } },
        { integrationId: 'google-ads', config: { conversion: { id: '222' } } },
      ],
    });
    await insertApiFlow(svc.db, site, { name: 'C draft', triggerKey: 'signup', status: 'draft' });
    otherSite = await insertSite(svc.db, svc.accountId);
    await setSiteDomain(svc.db, otherSite.id, 'https://app.example.com');
    await insertApiFlow(svc.db, otherSite, { name: 'D other site', triggerKey: 'signup' });
  });
  afterAll(() => svc.close());

  describe('fan-out', () => {
    it('promotes a signed report into one event per live flow with the trigger key, never drafts', async () => {
      const id = eventId();
      const res = await send({ correlation_token: null, customer_event_id: id, email: 'Ada@Example.com', allow_uncorrelated: true });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'promoted', promoted_count: 2, customer_event_id: id, correlated: false });
      const events = await eventsOf(svc.db, id);
      expect(events.map((e) => e.flow_id)).toEqual([flowIds.a, flowIds.b]);
      expect(events[0]).toMatchObject({ trigger: 'api', flow_name: 'A signup to Google Ads', match_quality: 'low', email: 'ada@example.com', click_ids: null });
      expect(events[0]!.data).toMatchObject({ customer_event_id: id, match_reason: 'no_correlation_token' });
      const actions = await svc.db.query<{ conversion_id: string; due: boolean }>(
        `select a.conversion_id, o.due_at <= now() as due from event_actions a join outbox o on o.event_action_id = a.id
         where a.event_id = $1 order by a.position`,
        [events[1]!.id],
      );
      expect(actions).toEqual([{ conversion_id: '111', due: true }, { conversion_id: '222', due: true }]);
    });

    it('keeps a report that matches no live flow and says so', async () => {
      const id = eventId();
      const res = await send({ correlation_token: null, customer_event_id: id, allow_uncorrelated: true }, { triggerKey: 'nothing-here' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'no_matching_flow', promoted_count: 0, customer_event_id: id, correlated: false });
      const reports = await svc.db.query('select 1 from reports where customer_event_id = $1', [id]);
      expect(reports).toHaveLength(1);
      expect(await eventsOf(svc.db, id)).toEqual([]);
    });

    it('stores the raw identity on the report for delivery, and ignores unknown fields', async () => {
      const id = eventId();
      const res = await send({ correlation_token: null, customer_event_id: id, email: 'a@b.co', phone: '+1 555 0100', first_name: 'Ada', last_name: null, plan: 'pro' });
      expect(res.statusCode).toBe(200);
      const [report] = await svc.db.query<{ identity: unknown }>('select identity from reports where customer_event_id = $1', [id]);
      expect(report!.identity).toEqual({ email: 'a@b.co', phone: '+1 555 0100', first_name: 'Ada' });
    });
  });

  describe('deduplication', () => {
    it('answers a repeated customer_event_id with the first response and counts nothing twice', async () => {
      const id = eventId();
      const first = await send({ correlation_token: null, customer_event_id: id, allow_uncorrelated: true });
      const again = await send({ correlation_token: newToken(), customer_event_id: id, email: 'x@y.z' }, { triggerKey: 'other' });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
      expect(await eventsOf(svc.db, id)).toHaveLength(2);
    });
  });

  describe('pairing', () => {
    it('pairs a report with the snapshot of its token: click ids, high match, the browser time', async () => {
      const snapshot = snapshotBody();
      await upsertSnapshots(svc.db, [{ siteId: site.id, snapshot }]);
      const id = eventId();
      const res = await send({ correlation_token: snapshot.correlation_token, customer_event_id: id, email: 'ada@example.com' });
      expect(res.json()).toMatchObject({ status: 'promoted', correlated: true });
      const [event] = await eventsOf(svc.db, id);
      expect(event).toMatchObject({ match_quality: 'high', click_ids: { gclid: 'Cj0KCQ-gclid-1' } });
      expect(event!.occurred_at.toISOString()).toBe(snapshot.occurred_at);
      expect(event!.data).toMatchObject({
        match_reason: 'paired', correlation_token: snapshot.correlation_token, customer_event_id: id,
        utm: { utm_source: 'google', utm_campaign: 'launch' }, landing_page_url: snapshot.touch!.landing_page_url,
        page_url: snapshot.page_url, platform_cookies: { _fbp: 'fb.1.1700000000000.123' },
      });
    });

    it("never pairs a report with another site's snapshot of the same token, before or after the report", async () => {
      // Two sites of one account on subdomains of one domain share the correlation cookie: the same token reaches both.
      const before = snapshotBody();
      await upsertSnapshots(svc.db, [{ siteId: otherSite.id, snapshot: before }]);
      const first = eventId();
      await send({ correlation_token: before.correlation_token, customer_event_id: first });
      const [waiting] = await eventsOf(svc.db, first);
      expect(waiting).toMatchObject({ match_quality: null, click_ids: null });
      expect(waiting!.data).toMatchObject({ match_reason: 'snapshot_pending' });
      expect(waiting!.data).not.toHaveProperty('page_url');

      // A snapshot of the other site arriving after the report leaves it held; its own site's snapshot releases it.
      const token = newToken();
      const second = eventId();
      await send({ correlation_token: token, customer_event_id: second });
      const heldFor = async () =>
        (await svc.db.query<{ wait_ms: number }>(
          `select (extract(epoch from (o.due_at - now())) * 1000)::int as wait_ms from outbox o
           join event_actions a on a.id = o.event_action_id join events e on e.id = a.event_id join reports r on r.id = e.report_id
           where r.customer_event_id = $1`,
          [second],
        )).map((row) => row.wait_ms);
      const beacon = (key: string, origin: string) =>
        svc.app.inject({
          method: 'POST', url: snapshotsPath(key), headers: { origin, 'content-type': 'text/plain;charset=UTF-8' },
          payload: JSON.stringify(snapshotBody({ correlation_token: token })),
        });
      expect((await beacon(otherSite.site_key, 'https://app.example.com')).statusCode).toBe(204);
      for (const wait of await heldFor()) expect(wait).toBeGreaterThan(PAIRING_WINDOW_MS / 2);
      expect((await beacon(site.site_key, ORIGIN)).statusCode).toBe(204);
      for (const wait of await heldFor()) expect(wait).toBeLessThanOrEqual(0);
    });

    it('rates a snapshot without click ids a medium match', async () => {
      const snapshot = snapshotBody({ touch: null });
      await upsertSnapshots(svc.db, [{ siteId: site.id, snapshot }]);
      const id = eventId();
      await send({ correlation_token: snapshot.correlation_token, customer_event_id: id });
      const [event] = await eventsOf(svc.db, id);
      expect(event).toMatchObject({ match_quality: 'medium', click_ids: null });
    });

    it('holds delivery for a snapshot not yet arrived, and makes it due the moment the snapshot comes', async () => {
      const token = newToken();
      const id = eventId();
      const res = await send({ correlation_token: token, customer_event_id: id });
      expect(res.json()).toMatchObject({ status: 'promoted', correlated: true });
      const [event] = await eventsOf(svc.db, id);
      expect(event).toMatchObject({ match_quality: null, click_ids: null });
      expect(event!.data).toMatchObject({ match_reason: 'snapshot_pending', correlation_token: token });
      const outboxDue = () =>
        svc.db.query<{ wait_ms: number }>(
          `select (extract(epoch from (o.due_at - now())) * 1000)::int as wait_ms from outbox o
           join event_actions a on a.id = o.event_action_id join events e on e.id = a.event_id join reports r on r.id = e.report_id
           where r.customer_event_id = $1`,
          [id],
        );
      const held = await outboxDue();
      expect(held).toHaveLength(3);
      for (const row of held) expect(row.wait_ms).toBeGreaterThan(PAIRING_WINDOW_MS / 2);

      const beacon = await svc.app.inject({
        method: 'POST', url: snapshotsPath(site.site_key), headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8' },
        payload: JSON.stringify(snapshotBody({ correlation_token: token })),
      });
      expect(beacon.statusCode).toBe(204);
      for (const row of await outboxDue()) expect(row.wait_ms).toBeLessThanOrEqual(0);
    });
  });

  describe('signature', () => {
    const body = () => ({ correlation_token: null, customer_event_id: eventId(), allow_uncorrelated: true });

    it('refuses a request without a signature header with 401 saying what to send', async () => {
      const req = signedReport(site.site_key, 'signup', body(), SECRET);
      delete req.headers[SIGNATURE_HEADER];
      const res = await svc.app.inject(req);
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toMatchObject({ type: 'authentication_error', code: 'no_signature_header' });
    });

    it('refuses a malformed signature header', async () => {
      const req = signedReport(site.site_key, 'signup', body(), SECRET);
      req.headers[SIGNATURE_HEADER] = 'sha256=abc';
      const res = await svc.app.inject(req);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('malformed_header');
    });

    it('refuses a signature made with another secret, naming the likely causes', async () => {
      const res = await send(body(), { secret: 'whsec_wrong' });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('no_signature_match');
      expect(res.json().error.message).toMatch(/raw body/);
    });

    it('refuses a body re-serialised after signing', async () => {
      const original = body();
      const req = signedReport(site.site_key, 'signup', original, SECRET);
      req.payload = JSON.stringify(original, null, 2);
      const res = await svc.app.inject(req);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('no_signature_match');
      expect(await svc.db.query('select 1 from reports where customer_event_id = $1', [original.customer_event_id])).toEqual([]);
    });

    it('verifies the path as sent, ignoring a query string', async () => {
      const req = signedReport(site.site_key, 'signup', body(), SECRET);
      req.url += '?source=test';
      expect((await svc.app.inject(req)).statusCode).toBe(200);
    });

    it.each([
      // A minute past the tolerance, not a second: the service reads the real clock, and on a busy machine a second can
      // pass between signing and checking (the exact boundary is tested with an injected clock in signature tests).
      ['older than 300 s', -360],
      ['more than 300 s in the future', 360],
    ])('refuses a timestamp %s, pointing at the clock', async (_label, offset) => {
      const res = await send(body(), { timestamp: unixSeconds() + offset });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('timestamp_outside_tolerance');
      expect(res.json().error.message).toMatch(/clock/);
    });

    it('accepts a timestamp a little old', async () => {
      expect((await send(body(), { timestamp: unixSeconds() - 200 })).statusCode).toBe(200);
    });

    it('accepts several v1 values, one of them right (secret rotation on the sender side)', async () => {
      const b = body();
      const url = saasSignupPath(site.site_key, 'signup');
      const payload = JSON.stringify(b);
      const t = unixSeconds();
      const header = formatSignatureHeader(t, [computeSignature('whsec_old', t, url, payload), computeSignature(SECRET, t, url, payload)]);
      const res = await svc.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: header }, payload });
      expect(res.statusCode).toBe(200);
    });

    it('accepts the previous secret during its grace period and refuses it after', async () => {
      const rotated = await insertSite(svc.db, svc.accountId);
      await insertApiFlow(svc.db, rotated, { triggerKey: 'signup' });
      await connectApiTrigger(svc.db, rotated, SECRET, { secret: OLD_SECRET, expiresAt: new Date(Date.now() + 3600_000) });
      const viaOld = () => svc.app.inject(signedReport(rotated.site_key, 'signup', body(), OLD_SECRET));
      expect((await viaOld()).statusCode).toBe(200);
      expect((await svc.app.inject(signedReport(rotated.site_key, 'signup', body(), SECRET))).statusCode).toBe(200);
      await connectApiTrigger(svc.db, rotated, SECRET, { secret: OLD_SECRET, expiresAt: new Date(Date.now() - 1000) });
      expect((await viaOld()).statusCode).toBe(401);
    });

    it('tells a site without a connected API trigger source that it has no secret', async () => {
      const bare = await insertSite(svc.db, svc.accountId);
      const res = await svc.app.inject(signedReport(bare.site_key, 'signup', body(), SECRET));
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toMatchObject({ code: 'no_webhook_secret' });
      expect(res.json().error.message).toMatch(/^no webhook secret: connect the API trigger source/);
    });
  });

  describe('bad requests', () => {
    it('answers an unknown site key with 404', async () => {
      const res = await svc.app.inject(signedReport('nosuchsite00', 'signup', { customer_event_id: 'x', correlation_token: null }, SECRET));
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('site_not_found');
    });

    it.each([['has a space', 'bad key'], ['is too long', 'k'.repeat(65)], ['has a dot', 'bad.key']])(
      'answers a trigger key that %s with 400',
      async (_label, key) => {
        const res = await svc.app.inject(signedReport(site.site_key, key, { customer_event_id: 'x', correlation_token: null }, SECRET));
        expect(res.statusCode).toBe(400);
        expect(res.json().error.param).toBe('trigger_key');
      },
    );

    it('refuses a body over 64 KB with 413', async () => {
      const res = await send({ correlation_token: null, customer_event_id: 'big', first_name: 'x'.repeat(WEBHOOK_MAX_BYTES) });
      expect(res.statusCode).toBe(413);
      expect(res.json().error.code).toBe('payload_too_large');
    });

    it.each<[string, Record<string, unknown>]>([
      ['customer_event_id', { customer_event_id: 'x'.repeat(201) }],
      ['customer_event_id', { customer_event_id: '😀'.repeat(201) }],
      ['customer_event_id', { customer_event_id: '' }],
      ['customer_event_id', { customer_event_id: 42 }],
      ['customer_event_id', { customer_event_id: undefined }],
      ['correlation_token', { correlation_token: 'not-a-token' }],
      ['email', { email: 42 }],
      ['phone', { phone: 'x'.repeat(513) }],
      ['allow_uncorrelated', { allow_uncorrelated: 'yes' }],
    ])('answers a bad %s with 400 naming it, and records nothing', async (param, overrides) => {
      const b = { correlation_token: null, customer_event_id: eventId(), ...overrides };
      const res = await send(b);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.param).toBe(param);
      const n = await svc.db.query<{ n: number }>('select count(*)::int as n from reports where site_id = $1 and customer_event_id = $2', [site.id, String(b.customer_event_id)]);
      expect(n[0]!.n).toBe(0);
    });

    it('counts 200 characters as characters: an id of 200 emoji (400 UTF-16 units) and a 512-emoji name are taken', async () => {
      const id = `${'😀'.repeat(190)}${eventId().slice(0, 10)}`;
      const res = await send({ correlation_token: null, allow_uncorrelated: true, customer_event_id: id, first_name: '😀'.repeat(512) });
      expect(res.statusCode, res.body).toBe(200);
      const n = await svc.db.query<{ n: number }>('select count(*)::int as n from reports where site_id = $1 and customer_event_id = $2', [site.id, id]);
      expect(n[0]!.n).toBe(1);
    });

    it.each([['customer_event_id', { customer_event_id: 'a\u0000b' }], ['email', { email: 'jane\u0000@example.com' }]])(
      'answers a NUL character in %s with 400 invalid_json instead of failing the write',
      async (_field, overrides) => {
        const res = await send({ correlation_token: null, customer_event_id: eventId(), ...overrides });
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
        expect(res.json().error.message).toMatch(/NUL/);
      },
    );

    it('accepts a customer_event_id of exactly 200 characters', async () => {
      expect((await send({ correlation_token: null, customer_event_id: 'y'.repeat(200) })).statusCode).toBe(200);
    });

    it('answers a signed body that is not a JSON object with 400 invalid_json', async () => {
      for (const raw of ['not json', '[1,2]']) {
        const res = await svc.app.inject(signedReport(site.site_key, 'signup', null, SECRET, { rawBody: raw }));
        expect(res.statusCode).toBe(400);
        expect(res.json().error.code).toBe('invalid_json');
      }
    });
  });
});

describe.each(DATABASE_KINDS)('webhook deduplication under concurrent retries on $name', (kind) => {
  let db: Database;
  let app: FastifyInstance;
  let site: SiteRow;
  beforeAll(async () => {
    db = await kind.open();
    const account = await insertAccount(db, 'a');
    site = await insertSite(db, account.id);
    await connectApiTrigger(db, site, SECRET);
    await insertApiFlow(db, site, { triggerKey: 'signup', name: 'one' });
    await insertApiFlow(db, site, { triggerKey: 'signup', name: 'two' });
    app = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY }), logger: false });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  it('records twenty identical simultaneous reports once and answers all with the first response', async () => {
    const token = newToken();
    await upsertSnapshots(db, [{ siteId: site.id, snapshot: snapshotBody({ correlation_token: token }) }]);
    const body = { correlation_token: token, customer_event_id: 'same-signup', email: 'ada@example.com' };
    const responses = await Promise.all(Array.from({ length: 20 }, () => app.inject(signedReport(site.site_key, 'signup', body, SECRET))));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    const expected = { status: 'promoted', promoted_count: 2, customer_event_id: 'same-signup', correlated: true };
    for (const r of responses) expect(r.json()).toEqual(expected);
    const counts = await db.query<{ reports: number; events: number; outbox: number }>(
      `select (select count(*)::int from reports) as reports, (select count(*)::int from events) as events,
              (select count(*)::int from outbox) as outbox`,
    );
    expect(counts[0]).toEqual({ reports: 1, events: 2, outbox: 2 });
  });
});
