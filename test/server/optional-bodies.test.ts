/** A route whose body is optional takes no body, or an empty one, on every route; a required body is still required. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from './support/harness';
import { upsertDestination } from '../../src/server/destinations/sql';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => {
  await svc.close();
});

describe('optional request bodies', () => {
  const bodies = [
    ['no body, no content-type', {}, undefined],
    ['an empty JSON body', { 'content-type': 'application/json' }, ''],
  ] as const;

  it.each(bodies)('POST /v1/dashboard/sign-in-links with %s makes a link', async (_name, headers, payload) => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/dashboard/sign-in-links', headers: { ...svc.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ url: expect.stringContaining('/dashboard/sign-in?token=') });
  });

  it.each(bodies)('POST /v1/destinations/{id}/test with %s tests the connection', async (_name, headers, payload) => {
    const destination = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' }, null);
    const res = await svc.app.inject({ method: 'POST', url: `/v1/destinations/${destination.id}/test`, headers: { ...svc.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ destination: destination.id, ok: false });
  });

  it.each(bodies)('POST /v1/destinations/{id}/redeliver with %s sends every failed delivery again (none here)', async (_name, headers, payload) => {
    const destination = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' }, null);
    const res = await svc.app.inject({ method: 'POST', url: `/v1/destinations/${destination.id}/redeliver`, headers: { ...svc.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ destination: destination.id, events: 0, actions: 0, has_more: false });
  });

  it.each([...bodies, ['an empty object', { 'content-type': 'application/json' }, '{}']] as const)(
    'POST /v1/sites with %s creates a site with the documented defaults',
    async (_name, headers, payload) => {
      const res = await svc.app.inject({ method: 'POST', url: '/v1/sites', headers: { ...svc.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
      expect(res.statusCode).toBe(201);
      const site = res.json();
      expect(site).toMatchObject({ id: expect.stringMatching(/^site_/), name: 'My Website', domain: null, timezone: 'America/New_York', site_key: expect.any(String) });
      // Its loader settings are the defaults too.
      const config = await svc.app.inject({ method: 'GET', url: `/collect/v1/sites/${site.site_key}/config` });
      expect(config.json()).toMatchObject({ honor_gpc: true, correlation_ttl_seconds: 1800 });
      const read = await svc.app.inject({ method: 'GET', url: `/v1/sites/${site.id}`, headers: svc.auth });
      expect(read.json()).toEqual(site);
    },
  );

  it('POST /v1/sites still refuses a body that is not an object, and checks the fields it is given', async () => {
    const post = (payload: string) => svc.app.inject({ method: 'POST', url: '/v1/sites', headers: { ...svc.auth, 'content-type': 'application/json' }, payload });
    for (const payload of ['null', '[]', '"site"', '3']) {
      const res = await post(payload);
      expect(res.statusCode, payload).toBe(400);
      expect(res.json().error.code, payload).toBe('invalid_body');
    }
    expect((await post('{"nme": "x"}')).json().error).toMatchObject({ code: 'parameter_unknown', param: 'nme' });
    expect((await post('{"name": "Shop"}')).json()).toMatchObject({ name: 'Shop', timezone: 'America/New_York' });
  });

  it('still refuses a missing body where one is required', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/flows', headers: svc.auth });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.type).toBe('invalid_request_error');
  });

  it.each(bodies)('PATCH /v1/sites/{id} with %s is still refused (a change names what it changes)', async (_name, headers, payload) => {
    const res = await svc.app.inject({ method: 'PATCH', url: `/v1/sites/${svc.site.id}`, headers: { ...svc.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_body');
  });
});

describe('endpoints that take no query parameters or no body', () => {
  it('refuse any query parameter with 400 parameter_unknown, as the lists refuse the ones they do not take', async () => {
    const urls = [
      ['GET', `/v1/sites/${svc.site.id}?x=1`], ['PATCH', `/v1/sites/${svc.site.id}?x=1`], ['POST', '/v1/sites?x=1'], ['GET', '/v1/events/evt_nothing?expand=1'],
    ] as const;
    for (const [method, url] of urls) {
      const res = await svc.app.inject({ method, url, headers: { ...svc.auth, 'content-type': 'application/json' }, payload: '{"name":"Shop"}' });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error, url).toMatchObject({ code: 'parameter_unknown', param: url.endsWith('expand=1') ? 'expand' : 'x' });
    }
    expect((await svc.app.inject({ method: 'GET', url: `/v1/sites/${svc.site.id}`, headers: svc.auth })).statusCode).toBe(200);
  });

  it('refuse a body field where they take no body, and take none, {} or an empty body', async () => {
    const flow = await svc.app.inject({
      method: 'POST', url: '/v1/flows', headers: svc.auth,
      payload: { site_id: svc.site.id, name: 'Leads', trigger_config: { integrationId: 'html', pageFilter: 'all' },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '42' } } }] },
    });
    expect(flow.statusCode).toBe(201);
    const unpublish = (payload?: string) =>
      svc.app.inject({ method: 'POST', url: `/v1/flows/${flow.json().id}/unpublish`, headers: { ...svc.auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload }) });
    expect((await unpublish('{"x": 1}')).json().error).toMatchObject({ code: 'parameter_unknown', param: 'x' });
    expect((await unpublish('[]')).json().error).toMatchObject({ code: 'invalid_body' });
    // A draft unpublished again is answered as it is (200): the body, absent, empty or {}, is taken.
    for (const payload of [undefined, '', '{}']) expect((await unpublish(payload)).statusCode, String(payload)).toBe(200);
    const redeliver = await svc.app.inject({ method: 'POST', url: '/v1/events/evt_nothing/redeliver', headers: svc.auth, payload: { x: 1 } });
    expect(redeliver.json().error).toMatchObject({ code: 'parameter_unknown', param: 'x' });
  });
});
