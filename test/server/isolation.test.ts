import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService, type Tenant } from './support/rest-harness';
import { insertEvent } from '../../src/server/fanout/sql';
import { upsertDestination } from '../../src/server/destinations/sql';
import { connectTriggerSource, findTriggerSources } from '../../src/server/webhook/secret-sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { serviceSecretBox } from '../../src/server/db/secret-box';

describe.each(DATABASE_KINDS)('account isolation on $name', (kind) => {
  let svc: RestService;
  /** The owner of everything below. */
  let a: Tenant;
  /** Another account, probing a's objects with its own key. */
  let b: Tenant;
  const A: Record<'site' | 'handoff' | 'flow' | 'event', string> = { site: '', handoff: '', flow: '', event: '' };

  beforeAll(async () => {
    svc = await createRestService(kind);
    a = svc;
    b = await svc.addTenant('Intruder');
    A.site = a.site.id;
    A.handoff = json(await svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: a.auth, payload: { purpose: 'connect_trigger_source' } })).id;
    await upsertDestination(svc.db, a.accountId, 'google-ads', { customer_id: '1234567890' });
    await connectTriggerSource(svc.db, serviceSecretBox(svc.settings), a.accountId, a.site.id);
    A.flow = json(
      await svc.app.inject({
        method: 'POST', url: '/v1/flows', headers: a.auth,
        payload: {
          site_id: A.site, name: 'A flow', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'k' },
          actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '1' } } }],
        },
      }),
    ).id;
    A.event = (
      await svc.db.transaction((tx) =>
        insertEvent(tx, {
          accountId: a.accountId, siteId: A.site, siteKey: a.site.site_key, flowId: A.flow, flowName: 'A flow', reportId: null,
          trigger: 'api', occurredAt: new Date(), matchQuality: 'low', email: 'a@example.com', clickIds: null, data: {}, actions: [],
        }),
      )
    ).id;
  });
  afterAll(() => svc.close());

  const as = (who: Tenant, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    svc.app.inject({ method, url, headers: who.auth, ...(payload ? { payload } : {}) });

  const direct: Array<[string, 'GET' | 'POST' | 'PATCH', (ids: typeof A) => string, object?]> = [
    ['GET /v1/sites/{id}', 'GET', (x) => `/v1/sites/${x.site}`],
    ['PATCH /v1/sites/{id}', 'PATCH', (x) => `/v1/sites/${x.site}`, { name: 'Taken over' }],
    ['GET /v1/handoffs/{id}', 'GET', (x) => `/v1/handoffs/${x.handoff}`],
    ['GET /v1/flows/{id}', 'GET', (x) => `/v1/flows/${x.flow}`],
    ['PATCH /v1/flows/{id}', 'PATCH', (x) => `/v1/flows/${x.flow}`, { name: 'Taken over' }],
    ['POST /v1/flows/{id}/publish', 'POST', (x) => `/v1/flows/${x.flow}/publish`],
    ['POST /v1/flows/{id}/unpublish', 'POST', (x) => `/v1/flows/${x.flow}/unpublish`],
    ['GET /v1/events/{id}', 'GET', (x) => `/v1/events/${x.event}`],
  ];

  /** The owner's rows as stored, to prove an intruder's attempt changed nothing. */
  const ownerRows = async () =>
    JSON.stringify([
      await svc.db.query('select * from sites where id = $1', [A.site]),
      await svc.db.query('select * from flows where id = $1', [A.flow]),
      await svc.db.query('select * from handoffs where id = $1', [A.handoff]),
    ]);

  it.each(direct)("answers %s on another account's object with the same 404 as for an id that does not exist, changing nothing", async (_name, method, url, payload) => {
    const before = await ownerRows();
    const res = await as(b, method, url(A), payload);
    expect(await ownerRows()).toBe(before);
    expect(res.statusCode).toBe(404);
    expect(errorOf(res)).toMatchObject({ type: 'not_found_error', code: 'resource_missing' });
    const missing = { site: 'site_missing', handoff: 'hdf_missing', flow: 'flow_missing', event: 'evt_missing' };
    const unknown = await as(b, method, url(missing), payload);
    const strip = (message: string) => message.replace(/'[^']*'/, "'…'");
    expect(strip(errorOf(res).message)).toBe(strip(errorOf(unknown).message));
    expect((await as(a, method, url(A), payload)).statusCode).toBe(200);
  });

  it.each([
    ['POST /v1/handoffs for its site', () => as(b, 'POST', '/v1/handoffs', { purpose: 'connect_trigger_source', site_id: A.site }), 'site_id'],
    [
      'POST /v1/flows on its site',
      () => as(b, 'POST', '/v1/flows', { site_id: A.site, name: 'x', trigger_config: { integrationId: 'f', pageFilter: 'all' }, actions_config: [{ integrationId: 'google-ads', config: {} }] }),
      'site_id',
    ],
    ['GET /v1/flows?site_id=', () => as(b, 'GET', `/v1/flows?site_id=${A.site}`), 'site_id'],
    ['GET /v1/events?site_id=', () => as(b, 'GET', `/v1/events?site_id=${A.site}`), 'site_id'],
    ['GET /v1/events?flow_id=', () => as(b, 'GET', `/v1/events?flow_id=${A.flow}`), 'flow_id'],
  ])("answers 404 to %s of another account's object", async (_name, request, param) => {
    const res = await request();
    expect(res.statusCode).toBe(404);
    expect(errorOf(res).param).toBe(param);
  });

  it("never lists another account's objects", async () => {
    const sites = json(await as(b, 'GET', '/v1/sites'));
    expect(sites.data.map((s: { id: string }) => s.id)).toEqual([b.site.id]);
    expect(json(await as(b, 'GET', '/v1/flows')).data).toEqual([]);
    expect(json(await as(b, 'GET', '/v1/events')).data).toEqual([]);
    expect(json(await as(a, 'GET', '/v1/events')).data.map((e: { id: string }) => e.id)).toEqual([A.event]);
  });

  it("does not resolve another account's ids as cursors", async () => {
    for (const url of [`/v1/sites?starting_after=${A.site}`, `/v1/sites?ending_before=${A.site}`, `/v1/flows?starting_after=${A.flow}`]) {
      const res = await as(b, 'GET', url);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res).code).toBe('invalid_cursor');
    }
  });

  it("does not count another account's connected destination or trigger source when publishing", async () => {
    const flow = json(
      await as(b, 'POST', '/v1/flows', {
        site_id: b.site.id, name: 'B flow', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'k' },
        actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '1' } } }],
      }),
    );
    const res = await as(b, 'POST', `/v1/flows/${flow.id}/publish`);
    expect(res.statusCode).toBe(400);
    expect(json(res).error.errors).toHaveLength(2);
  });

  it("reads the webhook secrets of many sites at once, each site's own, never another account's", async () => {
    const unconnected = await insertSite(svc.db, a.accountId, { name: 'A second site' });
    const found = await findTriggerSources(svc.db, a.accountId, [A.site, unconnected.id, b.site.id]);
    expect([...found.keys()]).toEqual([A.site, unconnected.id, b.site.id]);
    expect(found.get(A.site)).toMatchObject({ site_id: A.site, account_id: a.accountId, type: 'api' });
    expect(found.get(unconnected.id)).toBeNull();
    // b's site asked for with a's account: nothing, whether b connected its own or not.
    await connectTriggerSource(svc.db, serviceSecretBox(svc.settings), b.accountId, b.site.id);
    expect((await findTriggerSources(svc.db, a.accountId, [b.site.id])).get(b.site.id)).toBeNull();
    expect((await findTriggerSources(svc.db, b.accountId, [b.site.id])).get(b.site.id)).toMatchObject({ account_id: b.accountId });
    expect(await findTriggerSources(svc.db, a.accountId, [])).toEqual(new Map());
  });
});
