import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService } from './support/rest-harness';
import { issueApiKey } from '../../src/server/accounts/sql';

describe.each(DATABASE_KINDS)('REST authentication on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  const sites = (headers: Record<string, string>) => svc.app.inject({ method: 'GET', url: '/v1/sites', headers });

  it('lets a request with a valid Bearer key through', async () => {
    expect((await sites(svc.auth)).statusCode).toBe(200);
    expect((await sites({ authorization: `bearer ${svc.apiKey}` })).statusCode).toBe(200);
  });

  it('answers 401 authentication_error when the Authorization header is missing', async () => {
    const res = await sites({});
    expect(res.statusCode).toBe(401);
    expect(errorOf(res)).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
    expect(errorOf(res).message).toMatch(/Authorization: Bearer/);
    // RFC 9110: a 401 carries a challenge; RFC 6750: no error attribute when no credentials were sent.
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it.each([
    ['an unknown key', 'Bearer cnv_sk_notarealkeynotarealkeynotarealkey', 'Bearer error="invalid_token"'],
    ['Basic credentials', `Basic ${Buffer.from('u:p').toString('base64')}`, 'Bearer'],
    ['a bare key without the scheme', 'KEY', 'Bearer'],
    ['an empty Bearer', 'Bearer ', 'Bearer'],
  ])('answers 401 invalid_api_key for %s, with the Bearer challenge', async (_what, header, challenge) => {
    const res = await sites({ authorization: header === 'KEY' ? svc.apiKey : header });
    expect(res.statusCode).toBe(401);
    expect(errorOf(res)).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect(res.headers['www-authenticate']).toBe(challenge);
  });

  it('sends no challenge on an answer other than 401', async () => {
    expect((await sites(svc.auth)).headers['www-authenticate']).toBeUndefined();
    const missing = await svc.app.inject({ method: 'GET', url: '/v1/sites/site_nothere', headers: svc.auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['www-authenticate']).toBeUndefined();
  });

  it('refuses a revoked key', async () => {
    const { id, key } = await issueApiKey(svc.db, svc.accountId, 'to revoke');
    expect((await sites({ authorization: `Bearer ${key}` })).statusCode).toBe(200);
    await svc.db.query('update api_keys set revoked_at = now() where id = $1', [id]);
    const revoked = await sites({ authorization: `Bearer ${key}` });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('authenticates before reading the body: an unauthenticated write changes nothing', async () => {
    const res = await svc.app.inject({ method: 'PATCH', url: `/v1/sites/${svc.site.id}`, payload: { name: 'Hijacked' } });
    expect(res.statusCode).toBe(401);
    const site = json(await svc.app.inject({ method: 'GET', url: `/v1/sites/${svc.site.id}`, headers: svc.auth }));
    expect(site.name).toBe('My Website');
  });

  it('guards every /v1 resource', async () => {
    for (const [method, url] of [
      ['GET', '/v1/sites'], ['POST', '/v1/sites'], ['GET', `/v1/sites/${svc.site.id}`], ['PATCH', `/v1/sites/${svc.site.id}`],
      ['POST', '/v1/handoffs'], ['GET', '/v1/handoffs/hdf_x'], ['POST', '/v1/flows'], ['GET', '/v1/flows'],
      ['GET', '/v1/flows/flow_x'], ['PATCH', '/v1/flows/flow_x'], ['POST', '/v1/flows/flow_x/publish'],
      ['POST', '/v1/flows/flow_x/unpublish'], ['GET', '/v1/events'], ['GET', '/v1/events/evt_x'],
    ] as const) {
      const res = await svc.app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.headers['www-authenticate'], `${method} ${url}`).toBe('Bearer');
    }
  });

  it('asks no key outside /v1: collector, loader and hosted pages are public', async () => {
    const config = await svc.app.inject({ method: 'GET', url: `/collect/v1/sites/${svc.site.site_key}/config` });
    expect(config.statusCode).not.toBe(401);
    const hosted = await svc.app.inject({ method: 'GET', url: '/handoffs/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    expect(hosted.statusCode).toBe(404);
    expect(hosted.headers['content-type']).toMatch(/text\/html/);
  });
});
