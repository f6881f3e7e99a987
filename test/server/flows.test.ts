import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService, type Tenant } from './support/rest-harness';
import { upsertDestination } from '../../src/server/destinations/sql';
import { connectTriggerSource } from '../../src/server/webhook/secret-sql';
import { liveFlowsForTrigger } from '../../src/server/webhook/report-sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import type { Queryable } from '../../src/server/db/db';
import { flowPublishProblems, flowsPublishProblems } from '../../src/server/api/flows';

const API_TRIGGER = { type: 'saas_signup', integrationId: 'api', key: 'signup' };
const FORM_TRIGGER = { integrationId: 'gravity-forms', pageFilter: 'all' };
const ADS_ACTION = { integrationId: 'google-ads', config: { conversion: { id: '123456789' } } };
const FLOW_FIELDS = ['actions_config', 'created_at', 'id', 'name', 'published_at', 'site_id', 'status', 'trigger_config', 'updated_at'];

describe.each(DATABASE_KINDS)('flows API on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, who: Tenant = svc) =>
    svc.app.inject({ method, url, headers: who.auth, ...(payload === undefined ? {} : { payload: payload as object }) });
  const createFlow = async (who: Tenant, fields: Record<string, unknown> = {}) => {
    const res = await call('POST', '/v1/flows', { site_id: who.site.id, name: 'Signup flow', trigger_config: API_TRIGGER, actions_config: [ADS_ACTION], ...fields }, who);
    expect(res.statusCode, res.body).toBe(201);
    return json(res);
  };
  const flowCount = async () => (await svc.db.query<{ n: number }>('select count(*)::int as n from flows'))[0]!.n;
  /** A tenant with Google Ads connected and the API trigger source of its site connected. */
  const connectedTenant = async (name: string) => {
    const tenant = await svc.addTenant(name);
    await upsertDestination(svc.db, tenant.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null });
    await connectTriggerSource(svc.db, serviceSecretBox(svc.settings), tenant.accountId, tenant.site.id, 'api');
    return tenant;
  };

  describe('POST /v1/flows', () => {
    it('creates a draft (201) with the Flow record, delivering nothing', async () => {
      const flow = await createFlow(svc);
      expect(Object.keys(flow).sort()).toEqual(FLOW_FIELDS);
      expect(flow).toMatchObject({
        site_id: svc.site.id, name: 'Signup flow', trigger_config: API_TRIGGER, actions_config: [ADS_ACTION], status: 'draft', published_at: null,
      });
      expect(flow.id).toMatch(/^flow_/);
      expect(await liveFlowsForTrigger(svc.db, svc.site.id, 'signup')).toEqual([]);
      const [row] = await svc.db.query<{ trigger_key: string }>('select trigger_key from flows where id = $1', [flow.id]);
      expect(row!.trigger_key).toBe('signup');
    });

    it('creates a form-trigger draft', async () => {
      const flow = await createFlow(svc, { trigger_config: FORM_TRIGGER });
      expect(flow.trigger_config).toEqual(FORM_TRIGGER);
      const [row] = await svc.db.query<{ trigger_key: string | null }>('select trigger_key from flows where id = $1', [flow.id]);
      expect(row!.trigger_key).toBeNull();
    });

    it.each([
      [{ site_id: undefined }, 'site_id'],
      [{ name: undefined }, 'name'],
      [{ name: '  ' }, 'name'],
      [{ trigger_config: undefined }, 'trigger_config'],
      [{ actions_config: undefined }, 'actions_config'],
      [{ trigger_config: 'api' }, 'trigger_config'],
      [{ trigger_config: { ...API_TRIGGER, key: 'has space' } }, 'trigger_config.key'],
      [{ trigger_config: { ...API_TRIGGER, key: '' } }, 'trigger_config.key'],
      [{ trigger_config: { ...API_TRIGGER, key: 'k'.repeat(65) } }, 'trigger_config.key'],
      [{ trigger_config: { ...API_TRIGGER, type: 'signup' } }, 'trigger_config.type'],
      [{ trigger_config: { type: 'saas_signup', integrationId: 'zapier', key: 'k' } }, 'trigger_config.integrationId'],
      [{ trigger_config: { ...API_TRIGGER, secret: 'x' } }, 'trigger_config.secret'],
      [{ trigger_config: { integrationId: 'gravity-forms' } }, 'trigger_config.pageFilter'],
      [{ trigger_config: { pageFilter: 'all' } }, 'trigger_config.integrationId'],
      [{ actions_config: [] }, 'actions_config'],
      [{ actions_config: ADS_ACTION }, 'actions_config'],
      [{ actions_config: ['google-ads'] }, 'actions_config[0]'],
      [{ actions_config: [ADS_ACTION, { integrationId: 'google-ads' }] }, 'actions_config[1].config'],
      [{ actions_config: [{ config: {} }] }, 'actions_config[0].integrationId'],
      [{ actions_config: [{ ...ADS_ACTION, extra: 1 }] }, 'actions_config[0].extra'],
      [{ status: 'live' }, 'status'],
    ])('rejects %j with 400 naming %s, creating nothing', async (fields, param) => {
      const before = await flowCount();
      const body = { site_id: svc.site.id, name: 'x', trigger_config: API_TRIGGER, actions_config: [ADS_ACTION], ...fields };
      const res = await call('POST', '/v1/flows', JSON.parse(JSON.stringify(body)));
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', param });
      expect(await flowCount()).toBe(before);
    });

    it('answers 404 naming site_id for a site that is not the account’s', async () => {
      const other = await svc.addTenant('Other');
      const res = await call('POST', '/v1/flows', { site_id: other.site.id, name: 'x', trigger_config: API_TRIGGER, actions_config: [ADS_ACTION] });
      expect(res.statusCode).toBe(404);
      expect(errorOf(res)).toMatchObject({ code: 'resource_missing', param: 'site_id' });
    });
  });

  describe('reading flows', () => {
    it('reads one flow and answers 404 for an unknown id', async () => {
      const flow = await createFlow(svc);
      expect(json(await call('GET', `/v1/flows/${flow.id}`))).toEqual(flow);
      expect((await call('GET', '/v1/flows/flow_nope')).statusCode).toBe(404);
    });

    it('lists flows in creation order with the list pagination, filtered by site_id', async () => {
      const tenant = await svc.addTenant('Lister');
      const second = await insertSite(svc.db, tenant.accountId, { name: 'Second' });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createFlow(tenant, { name: `F${i}`, site_id: i % 2 ? second.id : tenant.site.id })).id);
      const page1 = json(await call('GET', '/v1/flows?limit=3', undefined, tenant));
      expect(page1.data.map((f: { id: string }) => f.id)).toEqual(ids.slice(0, 3));
      expect(page1).toMatchObject({ has_more: true, next_cursor: ids[2] });
      const page2 = json(await call('GET', `/v1/flows?limit=3&starting_after=${page1.next_cursor}`, undefined, tenant));
      expect(page2).toMatchObject({ has_more: false, next_cursor: null });
      expect(page2.data.map((f: { id: string }) => f.id)).toEqual(ids.slice(3));
      const ofSecond = json(await call('GET', `/v1/flows?site_id=${second.id}`, undefined, tenant));
      expect(ofSecond.data.map((f: { id: string }) => f.id)).toEqual([ids[1], ids[3]]);
      const unknown = await call('GET', '/v1/flows?site_id=site_nope', undefined, tenant);
      expect(unknown.statusCode).toBe(404);
      expect(errorOf(unknown).param).toBe('site_id');
      expect(errorOf(await call('GET', '/v1/flows?starting_after=flow_nope', undefined, tenant)).code).toBe('invalid_cursor');
    });
  });

  describe('POST /v1/flows/{id}/publish', () => {
    it('refuses with 400 flow_invalid listing every problem when nothing is connected', async () => {
      const tenant = await svc.addTenant('Unconnected');
      const flow = await createFlow(tenant);
      const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      expect(res.statusCode).toBe(400);
      const body = json(res);
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'flow_invalid', param: 'trigger_config' });
      expect(body.error.message).toMatch(/no API trigger source is connected/);
      expect(body.error.errors).toEqual([
        { param: 'trigger_config', message: expect.stringMatching(/connect_trigger_source/) },
        { param: 'actions_config[0].integrationId', message: expect.stringMatching(/Google Ads is not connected/) },
      ]);
      expect(json(await call('GET', `/v1/flows/${flow.id}`, undefined, tenant)).status).toBe('draft');
    });

    it.each([
      [{ conversion: {} }, 'actions_config[0].config.conversion.id', /missing/],
      [{ conversion: { id: '' } }, 'actions_config[0].config.conversion.id', /missing/],
      [{ conversion: { id: 42 } }, 'actions_config[0].config.conversion.id', /missing/],
      [{}, 'actions_config[0].config.conversion', /object/],
      [{ conversion: { id: 'purchase' } }, 'actions_config[0].config.conversion.id', /not a Google Ads conversion action/],
    ])('refuses a Google Ads action with config %j, naming %s', async (config, param, message) => {
      const tenant = await connectedTenant('Conversion');
      const flow = await createFlow(tenant, { actions_config: [{ integrationId: 'google-ads', config }] });
      const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'flow_invalid', param });
      expect(errorOf(res).message).toMatch(message);
    });

    it.each([
      ['over 100 characters, the longest goal name', 'S'.repeat(101), /100 characters/],
      ['with a line break', 'Sign\nup', /control character/],
      ['with a tab', 'Sign\tup', /control character/],
    ])('refuses a Microsoft Advertising conversion_name %s with 400 at publish, leaving the flow a draft', async (_what, name, message) => {
      const tenant = await connectedTenant('Goal name');
      await upsertDestination(svc.db, tenant.accountId, 'microsoft-ads', { customer_id: '123456789', account_id: '987654321' });
      const flow = await createFlow(tenant, { actions_config: [{ integrationId: 'microsoft-ads', config: { conversion_name: name } }] });
      const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'flow_invalid', param: 'actions_config[0].config.conversion_name' });
      expect(errorOf(res).message).toMatch(message);
      expect(json(await call('GET', `/v1/flows/${flow.id}`, undefined, tenant)).status).toBe('draft');
      const fixed = await call('PATCH', `/v1/flows/${flow.id}`, { actions_config: [{ integrationId: 'microsoft-ads', config: { conversion_name: 'S'.repeat(100) } }] }, tenant);
      expect(fixed.statusCode, fixed.body).toBe(200);
      expect(json(await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant)).status).toBe('live');
    });

    it.each([
      ['microsoft-ads', { customer_id: '123456789', account_id: '987654321' }, { conversion_name: 'Signup', value: 5, currency: 'XXX' }, 'currency'],
      ['microsoft-ads', { customer_id: '123456789', account_id: '987654321' }, { conversion_name: 'Signup', value: 5, currency: 'usd' }, 'currency'],
      ['microsoft-ads', { customer_id: '123456789', account_id: '987654321' }, { conversion_name: 'Signup', value: 1.1234567, currency: 'USD' }, 'value'],
      ['linkedin', { ad_account_id: '507404993', ad_account_urn: 'urn:li:sponsoredAccount:507404993' }, { conversion_rule: '104012', value: 5, currency: 'XXX' }, 'currency'],
      ['linkedin', { ad_account_id: '507404993', ad_account_urn: 'urn:li:sponsoredAccount:507404993' }, { conversion_rule: '104012', value: 2e9, currency: 'EUR' }, 'value'],
    ])("refuses a %s action whose fixed value or currency a report could not carry (%j, naming %j)", async (type, settings, config, field) => {
      const tenant = await connectedTenant('Fixed value');
      await upsertDestination(svc.db, tenant.accountId, type, settings);
      const flow = await createFlow(tenant, { actions_config: [{ integrationId: type, config }] });
      const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'flow_invalid', param: `actions_config[0].config.${field}` });
      expect(json(await call('GET', `/v1/flows/${flow.id}`, undefined, tenant)).status).toBe('draft');
      const fixed = await call('PATCH', `/v1/flows/${flow.id}`, { actions_config: [{ integrationId: type, config: { ...config, value: 5, currency: 'USD' } }] }, tenant);
      expect(fixed.statusCode, fixed.body).toBe(200);
      expect(json(await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant)).status).toBe('live');
    });

    it('refuses a destination that is not supported', async () => {
      const tenant = await connectedTenant('Unsupported');
      const flow = await createFlow(tenant, { actions_config: [ADS_ACTION, { integrationId: 'myspace-ads', config: {} }] });
      const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      expect(errorOf(res)).toMatchObject({ code: 'flow_invalid', param: 'actions_config[1].integrationId' });
      expect(errorOf(res).message).toMatch(/not a supported destination/);
    });

    it("checks a page of drafts at once as publish checks each, reading each site, trigger source and destination once", async () => {
      const tenant = await connectedTenant('Many drafts');
      const unconnected = await svc.addTenant('Many drafts, nothing connected');
      const drafts = [
        await createFlow(tenant),
        await createFlow(tenant, { actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: 'purchase' } } }] }),
        await createFlow(tenant, { actions_config: [ADS_ACTION, { integrationId: 'myspace-ads', config: {} }] }),
        await createFlow(tenant, { actions_config: [ADS_ACTION, { integrationId: 'meta', config: {} }] }),
        await createFlow(tenant, { trigger_config: FORM_TRIGGER }),
        await createFlow(tenant),
      ];
      const live = await createFlow(tenant);
      expect(json(await call('POST', `/v1/flows/${live.id}/publish`, undefined, tenant)).status).toBe('live');
      const foreign = await createFlow(unconnected);
      const ids = [...drafts.map((f) => f.id), live.id, foreign.id, 'flow_missing'];
      let statements = 0;
      const counted = { query: (sql: string, params?: readonly unknown[]) => (statements++, svc.db.query(sql, params)) } as Queryable;
      const together = await flowsPublishProblems(counted, tenant.accountId, ids);
      // One statement for the flows, one for the site, one for its trigger source, one per destination type.
      expect(statements).toBe(5);
      for (const draft of drafts) expect(together.get(draft.id)).toEqual(await flowPublishProblems(svc.db, tenant.accountId, draft.id));
      expect(together.get(drafts[0]!.id)).toEqual([]);
      expect(together.get(drafts[1]!.id)).toEqual([{ param: 'actions_config[0].config.conversion.id', message: expect.stringMatching(/not a Google Ads conversion action/) }]);
      expect(together.get(drafts[3]!.id)).toEqual([{ param: 'actions_config[1].integrationId', message: expect.stringMatching(/Meta is not connected/) }]);
      // Live, another account's, or no flow at all: nothing to say.
      expect([together.get(live.id), together.get(foreign.id), together.get('flow_missing')]).toEqual([[], [], []]);
    });

    it('makes a valid flow live (200), after which the webhook fan-out finds it; publishing again changes nothing', async () => {
      const tenant = await connectedTenant('Publisher');
      const flow = await createFlow(tenant);
      const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      expect(res.statusCode).toBe(200);
      const live = json(res);
      expect(live).toMatchObject({ id: flow.id, status: 'live' });
      expect(new Date(live.published_at).getTime()).toBeGreaterThan(0);
      expect((await liveFlowsForTrigger(svc.db, tenant.site.id, 'signup')).map((f) => f.id)).toEqual([flow.id]);
      const again = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      expect(again.statusCode).toBe(200);
      expect(json(again)).toEqual(live);
    });

    it('warns (and publishes) when another live flow sends the same conversions to the same Google Ads conversion action', async () => {
      const tenant = await connectedTenant('Doubles');
      await upsertDestination(svc.db, tenant.accountId, 'meta', { pixel_id: '1234567890' });
      const publish = async (flow: { id: string }) => {
        const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
        expect(res.statusCode, res.body).toBe(200);
        return json(res);
      };
      const first = await createFlow(tenant, { name: 'Signups to Google' });
      expect((await publish(first)).warnings).toEqual([]);
      // Another action id, another key, a later stage of the same key, or a platform that dedupes on the reporter's id: no warning.
      const unwarned = [
        { name: 'Another action', actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }] },
        { name: 'Another key', trigger_config: { ...API_TRIGGER, key: 'trial' } },
        { name: 'A later stage', trigger_config: { ...API_TRIGGER, type: 'conversion' } },
        { name: 'Meta only', actions_config: [{ integrationId: 'meta', config: {} }] },
      ];
      for (const fields of unwarned) expect((await publish(await createFlow(tenant, fields))).warnings, fields.name).toEqual([]);
      // The same action written as a resource name is the same action.
      const second = await createFlow(tenant, {
        name: 'Signups again',
        actions_config: [{ integrationId: 'meta', config: {} }, { integrationId: 'google-ads', config: { conversion: { id: 'customers/1234567890/conversionActions/123456789' } } }],
      });
      const live = await publish(second);
      expect(live.status).toBe('live');
      expect(live.warnings).toEqual([{ code: 'double_counted', flow_id: first.id, message: expect.stringContaining('conversion action 123456789') }]);
      expect(live.warnings[0].message).toContain("the live flow 'Signups to Google'");
      expect(live.warnings[0].message).toMatch(/as two conversions: the action counts each unless it counts one conversion per click/);
      expect(live.warnings[0].message).toContain(`'Signups to Google' (${first.id})`);
      // Publishing again says it again; the first flow's own publish now names the second.
      expect((await publish(second)).warnings).toEqual(live.warnings);
      expect((await publish(first)).warnings.map((w: { flow_id: string }) => w.flow_id)).toEqual([second.id]);
      // Once one is unpublished, nothing is said.
      await call('POST', `/v1/flows/${first.id}/unpublish`, undefined, tenant);
      expect((await publish(second)).warnings).toEqual([]);
    });

    it('warns for form triggers of one tool whose pages overlap, not for pages apart', async () => {
      const tenant = await svc.addTenant('Form doubles');
      await upsertDestination(svc.db, tenant.accountId, 'google-ads', { customer_id: '1234567890' });
      const publish = async (pageFilter: string) => {
        const flow = await createFlow(tenant, { name: `Forms ${pageFilter}`, trigger_config: { ...FORM_TRIGGER, pageFilter } });
        const res = await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
        expect(res.statusCode, res.body).toBe(200);
        return json(res).warnings as Array<{ flow_id: string }>;
      };
      expect(await publish('/signup')).toEqual([]);
      expect(await publish('/pricing/*')).toEqual([]);
      expect(await publish('/pricing/team/')).toHaveLength(1);
      expect(await publish('all')).toHaveLength(3);
    });

    it('publishes a form-trigger flow without an API trigger source', async () => {
      const tenant = await svc.addTenant('Form');
      await upsertDestination(svc.db, tenant.accountId, 'google-ads', { customer_id: '1234567890' });
      const flow = await createFlow(tenant, { trigger_config: FORM_TRIGGER });
      expect(json(await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant)).status).toBe('live');
    });

    it('ignores a body, even an empty one sent as JSON', async () => {
      const tenant = await connectedTenant('Bodies');
      const flow = await createFlow(tenant);
      const res = await svc.app.inject({
        method: 'POST', url: `/v1/flows/${flow.id}/publish`, headers: { ...tenant.auth, 'content-type': 'application/json' }, payload: '',
      });
      expect(res.statusCode).toBe(200);
    });

    it('answers 404 for an unknown flow', async () => {
      const res = await call('POST', '/v1/flows/flow_nope/publish');
      expect(res.statusCode).toBe(404);
      expect(errorOf(res).code).toBe('resource_missing');
    });
  });

  describe('editing and unpublishing', () => {
    it('lets a draft be fixed with PATCH and then published', async () => {
      const tenant = await connectedTenant('Fixer');
      const flow = await createFlow(tenant, { actions_config: [{ integrationId: 'google-ads', config: {} }] });
      expect((await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant)).statusCode).toBe(400);
      const fixed = await call('PATCH', `/v1/flows/${flow.id}`, { actions_config: [ADS_ACTION], trigger_config: { ...API_TRIGGER, key: 'signup_v2' } }, tenant);
      expect(fixed.statusCode).toBe(200);
      expect(json(fixed)).toMatchObject({ actions_config: [ADS_ACTION], name: 'Signup flow', status: 'draft' });
      expect(json(await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant)).status).toBe('live');
      expect((await liveFlowsForTrigger(svc.db, tenant.site.id, 'signup_v2')).map((f) => f.id)).toEqual([flow.id]);
    });

    it('refuses to change what a live flow delivers (409 flow_live) but lets it be renamed', async () => {
      const tenant = await connectedTenant('Live edit');
      const flow = await createFlow(tenant);
      await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      const res = await call('PATCH', `/v1/flows/${flow.id}`, { actions_config: [{ integrationId: 'google-ads', config: {} }] }, tenant);
      expect(res.statusCode).toBe(409);
      expect(errorOf(res)).toMatchObject({ type: 'conflict_error', code: 'flow_live' });
      const renamed = json(await call('PATCH', `/v1/flows/${flow.id}`, { name: 'Renamed' }, tenant));
      expect(renamed).toMatchObject({ name: 'Renamed', status: 'live', actions_config: [ADS_ACTION] });
    });

    it('unpublishes a live flow back to draft, after which the fan-out no longer finds it', async () => {
      const tenant = await connectedTenant('Unpublisher');
      const flow = await createFlow(tenant);
      await call('POST', `/v1/flows/${flow.id}/publish`, undefined, tenant);
      const res = await call('POST', `/v1/flows/${flow.id}/unpublish`, undefined, tenant);
      expect(res.statusCode).toBe(200);
      expect(json(res)).toMatchObject({ status: 'draft', published_at: null });
      expect(await liveFlowsForTrigger(svc.db, tenant.site.id, 'signup')).toEqual([]);
      expect(json(await call('POST', `/v1/flows/${flow.id}/unpublish`, undefined, tenant)).status).toBe('draft');
    });

    it.each([[{ site_id: 'site_x' }, 'site_id'], [{ status: 'live' }, 'status'], [{ trigger_config: { ...API_TRIGGER, key: '!' } }, 'trigger_config.key']])(
      'rejects the PATCH %j naming %s',
      async (payload, param) => {
        const flow = await createFlow(svc);
        const res = await call('PATCH', `/v1/flows/${flow.id}`, payload);
        expect(res.statusCode).toBe(400);
        expect(errorOf(res).param).toBe(param);
        expect(json(await call('GET', `/v1/flows/${flow.id}`))).toEqual(flow);
      },
    );
  });
});
