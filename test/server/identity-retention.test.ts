/**
 * Identity retention on both stores: the purge clears email, phone and names past CNV_IDENTITY_RETENTION_DAYS from
 * events, reports and form submissions (and the hashed identifiers from what delivery recorded of those events, and
 * the platform cookies an event shows), in chunks, and changes nothing else; the email and status filters of
 * GET /v1/events search only that window; the setting's default and floor.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { clearExpiredIdentity, startIdentityRetention } from '../../src/server/privacy';
import { loadSettings } from '../../src/server/settings';
import { newId } from '../../src/server/db/ids';
import { claimDeliveries, recordOutcomes } from '../../src/server/delivery/outbox-sql';
import { recordAdjustmentResults } from '../../src/server/delivery/adjustment-sql';

const DAY = 86_400_000;

describe.each(DATABASE_KINDS)('identity retention on $name', (kind) => {
  let svc: RestService;
  const now = new Date('2026-11-21T12:00:00Z');
  const daysAgo = (days: number) => new Date(now.getTime() - days * DAY);
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  /** Inserts a report with identity and its event, stored at `at`; returns their ids. */
  async function seed(tag: string, at: Date): Promise<{ report: string; event: string; submission: string }> {
    const report = newId('rpt');
    const event = newId('evt');
    const submission = newId('fsub');
    await svc.db.query(
      `insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity, response, created_at)
       values ($1, $2, $3, 'signup', 'tok', $4, '{"status":"promoted"}', $5)`,
      [report, svc.site.id, `ce-${tag}`, JSON.stringify({ email: `${tag}@example.com`, phone: '+15550100', first_name: 'Ada', last_name: 'L' }), at],
    );
    await svc.db.query(
      `insert into events (id, account_id, site_id, site_key, report_id, trigger, occurred_at, sort_at, status, email, click_ids, data, created_at)
       values ($1, $2, $3, $4, $5, 'api', $6, $6::timestamptz + make_interval(secs => random() / 1000), 'failed', $7, '{"gclid":"G"}', '{"customer_event_id":"x"}', $6)`,
      [event, svc.accountId, svc.site.id, svc.site.site_key, report, at, `${tag}@example.com`],
    );
    await svc.db.query(
      `insert into form_submissions (id, site_id, submission_id, integration, occurred_at, page_url, fields, user_agent, ip_address, received_at)
       values ($1, $2, $3, 'html', $4, 'https://www.example.com/', $5, 'UA', '192.0.2.1', $4)`,
      [submission, svc.site.id, `sub-${tag}`, at, JSON.stringify({ email: `${tag}@example.com` })],
    );
    // What delivery recorded of it: summaries with hashed identifiers (Meta's, Microsoft's shapes) beside plain facts.
    const action = newId('act');
    await svc.db.query(
      `insert into event_actions (id, event_id, position, destination, status, attempts, request) values ($1, $2, 0, 'meta', 'delivered', 1, $3)`,
      [action, event, JSON.stringify(summaryOf(tag))],
    );
    await svc.db.query(`insert into delivery_attempts (event_action_id, attempt, at, outcome, request) values ($1, 1, $2, 'delivered', $3)`, [action, at, JSON.stringify(summaryOf(tag))]);
    const adjustment = newId('adj');
    await svc.db.query(
      `insert into adjustments (id, site_id, adjustment_id, report_id, type, occurred_at, events, created_at) values ($1, $2, $3, $4, 'retract', $5, 1, $5)`,
      [adjustment, svc.site.id, `refund-${tag}`, report, at],
    );
    await svc.db.query(
      `insert into adjustment_results (id, adjustment_id, event_action_id, destination, status, request) values ($1, $2, $3, 'microsoft-ads', 'adjusted', $4)`,
      [newId('adr'), adjustment, action, JSON.stringify({ operation: 'ApplyOfflineConversionAdjustments', hashed_email: hashOf(`${tag}-adj`) })],
    );
    return { report, event, submission };
  }

  /** A 64-hex string standing for a SHA-256 hash of `seed`. */
  const hashOf = (seed: string) => createHash('sha256').update(seed).digest('hex');
  const summaryOf = (tag: string) => ({
    event_name: 'Lead', event_id: `ce-${tag}`, user_data: { em: [hashOf(`${tag}-em`)], ph: [hashOf(`${tag}-ph`)], fbp: 'from the _fbp cookie' },
    hashed_email: hashOf(`${tag}-ms`), transactionId: 'a'.repeat(32),
  });
  /** Everything delivery recorded of an event, as text. */
  const deliveryText = async (eventId: string) =>
    JSON.stringify(await svc.db.query(
      `select a.request, (select json_agg(d.request) from delivery_attempts d where d.event_action_id = a.id) as attempts,
              (select json_agg(r.request) from adjustment_results r where r.event_action_id = a.id) as adjusted
       from event_actions a where a.event_id = $1`,
      [eventId],
    ));

  const rows = async (table: string, ids: string[]) =>
    svc.db.query<Record<string, unknown>>(`select * from ${table} where id = any($1::text[]) order by id`, [ids]);

  it('clears identity past the window, in chunks, and nothing else', async () => {
    const old = await seed('old', daysAgo(91));
    const edge = await seed('edge', daysAgo(89));
    // More than one chunk of old events.
    await svc.db.query(
      `insert into events (id, account_id, site_id, site_key, trigger, occurred_at, sort_at, status, email, created_at)
       select 'evt_bulk' || g, $1, $2, $3, 'api', $4, $4::timestamptz + make_interval(secs => g / 1000000.0), 'completed', 'bulk@example.com', $4
       from generate_series(1, 1203) g`,
      [svc.accountId, svc.site.id, svc.site.site_key, daysAgo(200)],
    );
    const before = {
      reports: await rows('reports', [old.report, edge.report]),
      events: await rows('events', [old.event, edge.event]),
      submissions: await rows('form_submissions', [old.submission, edge.submission]),
    };

    expect(await clearExpiredIdentity(svc.db, 90, now)).toEqual({ events: 1204, reports: 1, form_submissions: 1 });
    const after = {
      reports: await rows('reports', [old.report, edge.report]),
      events: await rows('events', [old.event, edge.event]),
      submissions: await rows('form_submissions', [old.submission, edge.submission]),
    };
    // Exactly the identity columns of the old rows changed.
    const expected = {
      reports: before.reports.map((r) => (r.id === old.report ? { ...r, identity: {}, identity_cleared_at: expect.any(Date) } : r)),
      events: before.events.map((e) => (e.id === old.event ? { ...e, email: null, identity_cleared_at: expect.any(Date) } : e)),
      submissions: before.submissions.map((f) => (f.id === old.submission ? { ...f, fields: {} } : f)),
    };
    expect(after).toEqual(expected);
    expect((await svc.db.query(`select count(*)::int as n from events where email = 'bulk@example.com'`))[0]).toEqual({ n: 0 });
    expect((await svc.db.query(`select count(*)::int as n from events where id like 'evt_bulk%'`))[0]).toEqual({ n: 1203 });
    // The hashed identifiers of what delivery recorded of the old event went with it; the rest of the summaries stayed.
    const oldDelivery = await deliveryText(old.event);
    for (const hash of [hashOf('old-em'), hashOf('old-ph'), hashOf('old-ms'), hashOf('old-adj')]) expect(oldDelivery).not.toContain(hash);
    expect(oldDelivery.match(/removed past the identity retention/g)).toHaveLength(7);
    const [oldAction] = await svc.db.query<{ request: Record<string, any> }>('select request from event_actions where event_id = $1', [old.event]);
    expect(oldAction!.request).toEqual({
      event_name: 'Lead', event_id: 'ce-old', transactionId: 'a'.repeat(32), hashed_email: '(removed past the identity retention)',
      user_data: { em: ['(removed past the identity retention)'], ph: ['(removed past the identity retention)'], fbp: 'from the _fbp cookie' },
    });
    const edgeDelivery = await deliveryText(edge.event);
    for (const hash of [hashOf('edge-em'), hashOf('edge-ph'), hashOf('edge-ms'), hashOf('edge-adj')]) expect(edgeDelivery).toContain(hash);
    // A second pass finds nothing left to clear.
    expect(await clearExpiredIdentity(svc.db, 90, now)).toEqual({ events: 0, reports: 0, form_submissions: 0 });
    // A longer window keeps more.
    const kept = await seed('kept', daysAgo(120));
    expect(await clearExpiredIdentity(svc.db, 180, now)).toEqual({ events: 0, reports: 0, form_submissions: 0 });
    expect((await rows('events', [kept.event]))[0]!.email).toBe('kept@example.com');
  });

  it("clears an event's platform cookies (_fbc, _fbp: they identify a browser) with its identity, and keeps the rest of its data", async () => {
    const old = await seed('cookies-old', daysAgo(92));
    const recent = await seed('cookies-recent', daysAgo(10));
    const data = { customer_event_id: 'x', match_reason: 'paired', platform_cookies: { _fbp: 'fb.1.1700000000000.987654321', _fbc: 'fb.1.1700000000000.IwAR-x' } };
    await svc.db.query('update events set data = $2 where id = any($1::text[])', [[old.event, recent.event], JSON.stringify(data)]);
    await clearExpiredIdentity(svc.db, 90, now);
    const [cleared] = await rows('events', [old.event]);
    expect(cleared!.data).toEqual({ customer_event_id: 'x', match_reason: 'paired' });
    expect((await rows('events', [recent.event]))[0]!.data).toEqual(data);
  });

  it("cuts an event's addresses to origin and path with its identity (a query can name the visitor), keeping its UTM (but an email in it) and click ids", async () => {
    const old = await seed('urls-old', daysAgo(92));
    const recent = await seed('urls-recent', daysAgo(10));
    const data = {
      customer_event_id: 'x', match_reason: 'paired', utm: { utm_source: 'newsletter', utm_campaign: 'nov', utm_content: 'ada@example.com' },
      page_url: 'https://app.example.com/signup?email=ada%40example.com&plan=pro#step-2',
      landing_page_url: 'https://www.example.com/pricing?utm_source=newsletter&utm_campaign=nov&gclid=G&mc_eid=4f1d2e',
      landing_referrer: 'https://mail.example.net/read?msg=ada@example.com',
    };
    await svc.db.query('update events set data = $2 where id = any($1::text[])', [[old.event, recent.event], JSON.stringify(data)]);
    await clearExpiredIdentity(svc.db, 90, now);
    const [cleared] = await rows('events', [old.event]);
    expect(cleared!.data).toEqual({
      // A UTM value holding an email address goes; the campaign stays.
      customer_event_id: 'x', match_reason: 'paired', utm: { utm_source: 'newsletter', utm_campaign: 'nov' },
      page_url: 'https://app.example.com/signup',
      landing_page_url: 'https://www.example.com/pricing',
      landing_referrer: 'https://mail.example.net/read',
    });
    expect(cleared!.click_ids).toEqual({ gclid: 'G' });
    expect((await rows('events', [recent.event]))[0]!.data).toEqual(data);
    // An event without addresses (a report no snapshot paired) gains none.
    const bare = await seed('urls-none', daysAgo(93));
    await clearExpiredIdentity(svc.db, 90, now);
    expect((await rows('events', [bare.event]))[0]!.data).toEqual({ customer_event_id: 'x' });
  });

  it("cuts the addresses of a form submission's event touch (data.touch) too, keeping its click ids and UTM (but an email in it)", async () => {
    const old = await seed('touch-old', daysAgo(92));
    const recent = await seed('touch-recent', daysAgo(10));
    const touch = {
      click_ids: { gclid: 'G' }, utm: { utm_source: 'newsletter', utm_term: 'ada%40example.com' }, captured_at: '2026-08-01T10:00:00.000Z',
      landing_page_url: 'https://www.example.com/offer?email=ada%40example.com&gclid=G#form',
      referrer: 'https://mail.example.net/read?to=ada@example.com',
    };
    const data = { form_submission_id: 'fsub_x', integration: 'html', page_url: 'https://www.example.com/contact?email=ada%40example.com', touch };
    await svc.db.query('update events set data = $2 where id = any($1::text[])', [[old.event, recent.event], JSON.stringify(data)]);
    await clearExpiredIdentity(svc.db, 90, now);
    const [cleared] = await rows('events', [old.event]);
    expect(cleared!.data).toEqual({
      form_submission_id: 'fsub_x', integration: 'html', page_url: 'https://www.example.com/contact',
      touch: { ...touch, landing_page_url: 'https://www.example.com/offer', referrer: 'https://mail.example.net/read', utm: { utm_source: 'newsletter' } },
    });
    expect(JSON.stringify(cleared!.data)).not.toContain('ada');
    expect((await rows('events', [recent.event]))[0]!.data).toEqual(data);
    // A touch without a referrer keeps it null.
    const bare = await seed('touch-noref', daysAgo(93));
    await svc.db.query('update events set data = $2 where id = $1', [bare.event, JSON.stringify({ touch: { ...touch, referrer: null } })]);
    await clearExpiredIdentity(svc.db, 90, now);
    expect((await rows('events', [bare.event]))[0]!.data).toEqual({
      touch: { ...touch, landing_page_url: 'https://www.example.com/offer', referrer: null, utm: { utm_source: 'newsletter' } },
    });
  });

  it('runs hourly on the injected clock and logs counts, never a value', async () => {
    const seeded = await seed('clock', daysAgo(95));
    const lines: string[] = [];
    const log = { info: (obj: object, msg?: string) => lines.push(JSON.stringify({ obj, msg })), error: (obj: object) => lines.push(JSON.stringify(obj)) };
    const retention = startIdentityRetention({ db: svc.db, retentionDays: 90, log, now: () => now });
    await retention.stop();
    expect((await rows('events', [seeded.event]))[0]!.email).toBeNull();
    expect(lines.join('\n')).toMatch(/identity past its retention cleared/);
    expect(lines.join('\n')).not.toContain('@example.com');
  });

  it('GET /v1/events searches email and status within the window only', async () => {
    const tenant = await svc.addTenant('Window');
    const insert = async (email: string, createdAt: Date) => {
      const id = newId('evt');
      await svc.db.query(
        `insert into events (id, account_id, site_id, site_key, trigger, occurred_at, sort_at, status, email, created_at)
         values ($1, $2, $3, $4, 'api', $5, $5, 'failed', $6, $5)`,
        [id, tenant.accountId, tenant.site.id, tenant.site.site_key, createdAt, email],
      );
      return id;
    };
    // Not purged yet (the purge runs hourly), but already past the window.
    const stale = await insert('win@example.com', new Date(Date.now() - 91 * DAY));
    const recent = await insert('win@example.com', new Date(Date.now() - 89 * DAY));
    const ids = async (query: string) =>
      (json(await svc.app.inject({ method: 'GET', url: `/v1/events${query}`, headers: tenant.auth })).data as Array<{ id: string }>).map((e) => e.id);
    expect(await ids('?email=win@example.com')).toEqual([recent]);
    expect(await ids('?status=failed')).toEqual([recent]);
    expect(await ids('')).toEqual([recent, stale]);
  });

  it('a send that read its event before the purge cleared it records its summary without the hashes', async () => {
    const seeded = await seed('in-flight', daysAgo(100));
    // A conversion and an adjustment of the event under way (each read the event with its identity, then sent).
    const action = newId('act');
    await svc.db.query(`insert into event_actions (id, event_id, position, destination, status) values ($1, $2, 1, 'meta', 'queued')`, [action, seeded.event]);
    await svc.db.query(`insert into outbox (event_action_id, due_at) values ($1, $2)`, [action, daysAgo(1)]);
    const [claim] = (await claimDeliveries(svc.db, { now: new Date(), leaseMs: 60_000, limit: 100 })).filter((c) => c.eventActionId === action);
    const lease = new Date(Date.now() + 60_000);
    const [adjusting] = await svc.db.query<{ id: string }>(
      `update adjustment_results set status = 'queued', request = null, locked_until = $2
       where event_action_id in (select id from event_actions where event_id = $1) returning id`,
      [seeded.event, lease],
    );
    // The purge runs meanwhile.
    await clearExpiredIdentity(svc.db, 90, now);
    expect((await rows('events', [seeded.event]))[0]!.email).toBeNull();

    const request = { event_name: 'Lead', user_data: { em: [hashOf('in-flight-late-em')] }, hashed_email: hashOf('in-flight-late-ms') };
    const kept = await svc.db.transaction((tx) =>
      recordOutcomes(tx, [{ claim: claim!, finish: true, reschedule: null, countsAttempt: true, action: { actionId: action, status: 'delivered', attempts: 1, error: null, request } }], new Date()),
    );
    expect(kept.has(claim!.id)).toBe(true);
    const written = await svc.db.transaction((tx) =>
      recordAdjustmentResults(tx, [{ claim: { id: adjusting!.id, attempts: 0, lease }, status: 'adjusted', reason: null, attempts: 1, request: { hashed_email: hashOf('in-flight-late-adj') }, error: null }], new Date()),
    );
    expect(written.has(adjusting!.id)).toBe(true);

    const delivery = await deliveryText(seeded.event);
    for (const seed of ['in-flight-late-em', 'in-flight-late-ms', 'in-flight-late-adj']) expect(delivery).not.toContain(hashOf(seed));
    const [recorded] = await svc.db.query<{ request: unknown }>('select request from event_actions where id = $1', [action]);
    expect(recorded!.request).toEqual({
      event_name: 'Lead', user_data: { em: ['(removed past the identity retention)'] }, hashed_email: '(removed past the identity retention)',
    });
  });
});

describe('the identity retention setting', () => {
  it('defaults to 90 days and refuses less than 90 or a non-number', () => {
    expect(loadSettings({}).identityRetentionDays).toBe(90);
    expect(loadSettings({ CNV_IDENTITY_RETENTION_DAYS: '365' }).identityRetentionDays).toBe(365);
    expect(() => loadSettings({ CNV_IDENTITY_RETENTION_DAYS: '30' })).toThrow(/CNV_IDENTITY_RETENTION_DAYS.*from 90/);
    expect(() => loadSettings({ CNV_IDENTITY_RETENTION_DAYS: 'off' })).toThrow(/CNV_IDENTITY_RETENTION_DAYS/);
    expect(() => loadSettings({ CNV_IDENTITY_RETENTION_DAYS: '90.5' })).toThrow(/CNV_IDENTITY_RETENTION_DAYS/);
  });
});
