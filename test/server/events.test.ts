import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService, type Tenant } from './support/rest-harness';
import { insertEvent, type NewEvent } from '../../src/server/fanout/sql';
import { insertFlow } from '../../src/server/api/flows/sql';
import { insertSite } from '../../src/server/api/sites/sql';

type EventInput = Partial<NewEvent> & { occurredAt: Date };

describe.each(DATABASE_KINDS)('events API on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  const record = (who: Tenant, event: EventInput) =>
    svc.db.transaction((tx) =>
      insertEvent(tx, {
        accountId: who.accountId, siteId: who.site.id, siteKey: who.site.site_key, flowId: null, flowName: null, reportId: null,
        trigger: 'api', matchQuality: 'high', email: null, clickIds: { gclid: 'Cj0KCQ' }, data: {},
        actions: [{ destination: 'google-ads', conversionId: '123' }], ...event,
      }),
    );
  const list = (query: string, who: Tenant = svc) => svc.app.inject({ method: 'GET', url: `/v1/events${query}`, headers: who.auth });
  const ids = (body: { data: Array<{ id: string }> }) => body.data.map((e) => e.id);

  it('answers the Event record with its actions and the stored data passed through', async () => {
    const tenant = await svc.addTenant('Shape');
    const flow = await insertFlow(svc.db, tenant.accountId, tenant.site.id, {
      name: 'Signup', triggerConfig: { type: 'saas_signup', integrationId: 'api', key: 'k' }, actionsConfig: [], triggerKey: 'k',
    });
    const { id, actionIds } = await record(tenant, {
      occurredAt: new Date('2026-11-21T09:30:00.123Z'), flowId: flow.id, flowName: 'Signup', email: 'Ada@Example.com',
      data: { customer_event_id: 'user_1', utm: { utm_source: 'google' }, match_reason: 'paired' },
      actions: [{ destination: 'google-ads', conversionId: '123' }, { destination: 'google-ads', conversionId: '456' }],
    });
    await svc.db.query(`update event_actions set status = 'delivered', attempts = 1, delivered_at = '2026-11-21T09:31:00Z' where id = $1`, [actionIds[0]]);
    const res = await svc.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers: tenant.auth });
    expect(res.statusCode).toBe(200);
    const event = json(res);
    expect(event).toMatchObject({
      id, site_id: tenant.site.id, site_key: tenant.site.site_key, occurred_at: '2026-11-21T09:30:00.123Z', flow_id: flow.id,
      flow_name: 'Signup', trigger: 'api', status: 'queued', match_quality: 'high', email: 'ada@example.com',
      customer_event_id: 'user_1', click_ids: { gclid: 'Cj0KCQ' }, utm: { utm_source: 'google' }, match_reason: 'paired',
    });
    expect(event.actions).toEqual([
      { destination: 'google-ads', status: 'delivered', conversion_id: '123', attempts: 1, error: null, request: null, delivered_at: '2026-11-21T09:31:00.000Z', history: [] },
      { destination: 'google-ads', status: 'queued', conversion_id: '456', attempts: 0, error: null, request: null, delivered_at: null, history: [] },
    ]);
    // The list shows the same record, without the per-action history only the single read carries.
    const withoutHistory = { ...event, actions: event.actions.map(({ history: _history, ...action }: { history?: unknown }) => action) };
    expect(json(await list('', tenant)).data[0]).toEqual(withoutHistory);
  });

  it('answers 404 for an unknown event', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/events/evt_nope', headers: svc.auth });
    expect(res.statusCode).toBe(404);
    expect(errorOf(res).code).toBe('resource_missing');
  });

  it('lists newest first, 25 by default', async () => {
    const tenant = await svc.addTenant('Order');
    const made: string[] = [];
    for (let i = 0; i < 30; i++) made.push((await record(tenant, { occurredAt: new Date(Date.UTC(2026, 0, 1, 0, i)) })).id);
    const body = json(await list('', tenant));
    expect(ids(body)).toEqual(made.slice().reverse().slice(0, 25));
    expect(body.has_more).toBe(true);
  });

  it('walks 250 events that share one occurred_at in pages of 100, each exactly once, even while new events arrive', async () => {
    const tenant = await svc.addTenant('Ties');
    const at = new Date('2026-11-21T09:30:00.000Z');
    const made = new Set<string>();
    for (let i = 0; i < 250; i++) made.add((await record(tenant, { occurredAt: at })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`?limit=100${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`, tenant);
      expect(res.statusCode).toBe(200);
      const body = json(res);
      seen.push(...ids(body));
      if (body.has_more) expect(body.next_cursor).toMatch(/^2026-11-21T09:30:00\.000\d{3}Z$/);
      else expect(body.next_cursor).toBeNull();
      cursor = body.next_cursor;
      pages++;
      // A newer conversion arriving mid-walk lands before the walk's position: it is neither seen nor shifts the pages.
      await record(tenant, { occurredAt: at });
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(250);
    expect(new Set(seen)).toEqual(made);
  });

  describe('filters', () => {
    let tenant: Tenant;
    let otherSiteId: string;
    let flowId: string;
    const e: Record<string, string> = {};
    beforeAll(async () => {
      tenant = await svc.addTenant('Filters');
      const other = await insertSite(svc.db, tenant.accountId, { name: 'Other site' });
      otherSiteId = other.id;
      const flow = await insertFlow(svc.db, tenant.accountId, tenant.site.id, {
        name: 'F', triggerConfig: { integrationId: 'gravity-forms', pageFilter: 'all' }, actionsConfig: [], triggerKey: null,
      });
      flowId = flow.id;
      e.early = (await record(tenant, { occurredAt: new Date('2026-01-01T00:00:00Z'), email: 'ada@example.com' })).id;
      e.middle = (await record(tenant, { occurredAt: new Date('2026-01-02T00:00:00Z'), flowId, flowName: 'F' })).id;
      e.late = (await record(tenant, { occurredAt: new Date('2026-01-03T00:00:00Z'), actions: [] })).id; // no actions: completed
      e.otherSite = (await record(tenant, { occurredAt: new Date('2026-01-04T00:00:00Z'), siteId: other.id, siteKey: other.site_key })).id;
    });
    const q = async (query: string) => ids(json(await list(query, tenant)));

    it('merges all sites unless site_id is given', async () => {
      expect(await q('')).toEqual([e.otherSite, e.late, e.middle, e.early]);
      expect(await q(`?site_id=${otherSiteId}`)).toEqual([e.otherSite]);
      expect(await q(`?site_id=${tenant.site.id}`)).toEqual([e.late, e.middle, e.early]);
    });

    it('filters by flow_id', async () => {
      expect(await q(`?flow_id=${flowId}`)).toEqual([e.middle]);
    });

    it('matches email case-insensitively and exactly', async () => {
      expect(await q('?email=ADA%40Example.COM')).toEqual([e.early]);
      expect(await q('?email=ada')).toEqual([]);
    });

    it('filters by status', async () => {
      expect(await q('?status=completed')).toEqual([e.late]);
      expect(await q('?status=queued')).toEqual([e.otherSite, e.middle, e.early]);
      expect(await q('?status=failed')).toEqual([]);
    });

    it('bounds occurred_at inclusively on both sides, offsets understood', async () => {
      expect(await q('?occurred_after=2026-01-02T00:00:00Z&occurred_before=2026-01-03T00:00:00Z')).toEqual([e.late, e.middle]);
      expect(await q(`?occurred_after=${encodeURIComponent('2026-01-02T01:00:00+01:00')}`)).toEqual([e.otherSite, e.late, e.middle]);
      expect(await q('?occurred_before=2026-01-01T00:00:00.000Z')).toEqual([e.early]);
    });

    it.each([
      ['?limit=101', 'limit', 'parameter_invalid'],
      ['?limit=0', 'limit', 'parameter_invalid'],
      ['?ending_before=2026-01-01T00:00:00Z', 'ending_before', 'parameter_unsupported'],
      ['?starting_after=evt_123', 'starting_after', 'invalid_cursor'],
      ['?starting_after=2026-02-30T00:00:00Z', 'starting_after', 'invalid_cursor'],
      ['?starting_after=', 'starting_after', 'invalid_cursor'],
      ['?occurred_after=yesterday', 'occurred_after', 'parameter_invalid'],
      ['?occurred_after=2026-01-01', 'occurred_after', 'parameter_invalid'],
      ['?occurred_after=2026-01-01T00:00:00', 'occurred_after', 'parameter_invalid'],
      ['?occurred_after=0000-01-01T00:00:00Z', 'occurred_after', 'parameter_invalid'],
      ['?occurred_before=2026-01-01T00:00:00%2B23:00', 'occurred_before', 'parameter_invalid'],
      ['?occurred_after=2026-01-01T00:00:00+01:00', 'occurred_after', 'parameter_invalid'],
      ['?occurred_after=2026-01-03T00:00:00Z&occurred_before=2026-01-01T00:00:00Z', 'occurred_after', 'parameter_invalid'],
      ['?status=delivered', 'status', 'parameter_invalid'],
      // The spec fixes the status values (completed, failed, queued): erased is the dashboard's choice only.
      ['?status=erased', 'status', 'parameter_invalid'],
      ['?email=', 'email', 'parameter_invalid'],
      ['?sort=asc', 'sort', 'parameter_unknown'],
      ['?status=queued&status=failed', 'status', 'parameter_invalid'],
    ])('rejects %s with 400 naming %s', async (query, param, code) => {
      const res = await list(query, tenant);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', param, code });
    });

    it('lists only the parameters it accepts when refusing an unknown one: not ending_before, refused itself', async () => {
      const res = await list('?sort=asc', tenant);
      expect(errorOf(res).message).toBe(
        'Unknown query parameter: sort. Allowed here: site_id, flow_id, email, status, occurred_after, occurred_before, limit, starting_after.',
      );
    });

    it('answers 404 naming the filter for a site or flow that is not the account’s', async () => {
      const res = await list(`?site_id=${svc.site.id}`, tenant);
      expect(res.statusCode).toBe(404);
      expect(errorOf(res).param).toBe('site_id');
      const flow = await list('?flow_id=flow_nope', tenant);
      expect(flow.statusCode).toBe(404);
      expect(errorOf(flow).param).toBe('flow_id');
    });
  });
});
