import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService } from './support/rest-harness';
import { insertSite } from '../../src/server/api/sites/sql';

describe.each(DATABASE_KINDS)('POST /v1/handoffs and GET /v1/handoffs/{id} on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  const create = (payload: unknown, auth = svc.auth) =>
    svc.app.inject({ method: 'POST', url: '/v1/handoffs', headers: auth, payload: payload as object });
  const count = async () => (await svc.db.query<{ n: number }>('select count(*)::int as n from handoffs'))[0]!.n;

  it('creates a pending connect_destination handoff (201) whose url is the hosted page, addressed by a token and not the id', async () => {
    const res = await create({ purpose: 'connect_destination', destination_type: 'google-ads' });
    expect(res.statusCode).toBe(201);
    const handoff = json(res);
    expect(handoff).toMatchObject({
      status: 'pending', purpose: 'connect_destination', destination_type: 'google-ads', trigger_source: null, site_id: null, completed_at: null,
    });
    expect(handoff.id).toMatch(/^hdf_/);
    expect(handoff.url).toMatch(/^https:\/\/api\.cnv\.test\/handoffs\/[A-Za-z0-9]{32}$/);
    expect(handoff.url).not.toContain(handoff.id);
  });

  it('reads a handoff back for polling', async () => {
    const created = json(await create({ purpose: 'connect_destination', destination_type: 'google-ads' }));
    const res = await svc.app.inject({ method: 'GET', url: `/v1/handoffs/${created.id}`, headers: svc.auth });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual(created);
  });

  it('answers 404 for an unknown handoff id', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/handoffs/hdf_nope', headers: svc.auth });
    expect(res.statusCode).toBe(404);
    expect(errorOf(res)).toMatchObject({ type: 'not_found_error', code: 'resource_missing' });
  });

  it('creates a connect_trigger_source handoff for the only site when site_id is left out, trigger_source defaulting to api', async () => {
    const res = await create({ purpose: 'connect_trigger_source' });
    expect(res.statusCode).toBe(201);
    expect(json(res)).toMatchObject({ purpose: 'connect_trigger_source', trigger_source: 'api', site_id: svc.site.id, destination_type: null });
  });

  it.each([
    [{}, 'purpose', 'parameter_missing'],
    [{ purpose: 'connect_everything' }, 'purpose', 'parameter_invalid'],
    [{ purpose: 7 }, 'purpose', 'parameter_invalid'],
    [{ purpose: 'connect_destination' }, 'destination_type', 'parameter_missing'],
    [{ purpose: 'connect_destination', destination_type: 'myspace-ads' }, 'destination_type', 'parameter_invalid'],
    [{ purpose: 'connect_destination', destination_type: ['google-ads'] }, 'destination_type', 'parameter_invalid'],
    [{ purpose: 'connect_destination', destination_type: 'google-ads', site_id: 'site_x' }, 'site_id', 'parameter_unknown'],
    [{ purpose: 'connect_destination', destination_type: 'google-ads', colour: 'red' }, 'colour', 'parameter_unknown'],
    [{ purpose: 'connect_trigger_source', trigger_source: 'zapier' }, 'trigger_source', 'parameter_invalid'],
    [{ purpose: 'connect_trigger_source', destination_type: 'google-ads' }, 'destination_type', 'parameter_unknown'],
    [{ purpose: 'connect_trigger_source', site_id: 12 }, 'site_id', 'parameter_invalid'],
  ])('rejects %j with 400 naming %s, creating nothing', async (payload, param, code) => {
    const before = await count();
    const res = await create(payload);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', param, code });
    expect(await count()).toBe(before);
  });

  it('names the supported destination types when one is unknown', async () => {
    const res = await create({ purpose: 'connect_destination', destination_type: 'myspace-ads' });
    expect(errorOf(res).message).toContain('google-ads');
  });

  it('answers 404 naming site_id for a site that does not exist', async () => {
    const res = await create({ purpose: 'connect_trigger_source', site_id: 'site_missing' });
    expect(res.statusCode).toBe(404);
    expect(errorOf(res)).toMatchObject({ code: 'resource_missing', param: 'site_id' });
  });

  it('requires site_id once the account has more than one site', async () => {
    const tenant = await svc.addTenant('Two sites');
    const second = await insertSite(svc.db, tenant.accountId, { name: 'Second' });
    const res = await create({ purpose: 'connect_trigger_source' }, tenant.auth);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ param: 'site_id', code: 'parameter_missing' });
    expect(errorOf(res).message).toMatch(/more than one site/);
    const ok = await create({ purpose: 'connect_trigger_source', site_id: second.id }, tenant.auth);
    expect(json(ok).site_id).toBe(second.id);
  });
});
