import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService } from './support/rest-harness';
import { insertSite } from '../../src/server/api/sites/sql';

const SITE_FIELDS = ['created_at', 'domain', 'id', 'name', 'site_key', 'timezone'];

describe.each(DATABASE_KINDS)('sites API on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  const get = (url: string) => svc.app.inject({ method: 'GET', url, headers: svc.auth });
  const patch = (id: string, payload: unknown) =>
    svc.app.inject({ method: 'PATCH', url: `/v1/sites/${id}`, headers: svc.auth, payload: payload as object });

  describe('the bootstrap defaults and the Site record', () => {
    it('lists the account site with exactly the Site fields, the spec defaults, and a site_key distinct from its id', async () => {
      const res = await get('/v1/sites');
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(Object.keys(body).sort()).toEqual(['data', 'has_more', 'next_cursor']);
      const [site] = body.data;
      expect(Object.keys(site).sort()).toEqual(SITE_FIELDS);
      expect(site).toMatchObject({ id: svc.site.id, name: 'My Website', domain: null, timezone: 'America/New_York' });
      expect(site.id).toMatch(/^site_/);
      expect(site.site_key).toMatch(/^[0-9a-z]{12}$/);
      expect(site.site_key).not.toBe(site.id);
      expect(new Date(site.created_at).toISOString()).toBe(site.created_at);
    });

    it('reads one site by id and answers 404 resource_missing for an unknown id', async () => {
      expect(json(await get(`/v1/sites/${svc.site.id}`)).id).toBe(svc.site.id);
      const res = await get('/v1/sites/site_doesnotexist');
      expect(res.statusCode).toBe(404);
      expect(errorOf(res)).toMatchObject({ type: 'not_found_error', code: 'resource_missing', param: 'id' });
    });
  });

  describe('PATCH /v1/sites/{id}', () => {
    it('changes only the fields sent and answers the Site record', async () => {
      const site = await insertSite(svc.db, svc.accountId, { name: 'Patch me' });
      const res = await patch(site.id, { domain: 'https://www.example.com' });
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(Object.keys(body).sort()).toEqual(SITE_FIELDS);
      expect(body).toMatchObject({ name: 'Patch me', domain: 'https://www.example.com', timezone: 'America/New_York', site_key: site.site_key });
      const renamed = json(await patch(site.id, { name: '  Shop  ', timezone: 'Europe/Berlin' }));
      expect(renamed).toMatchObject({ name: 'Shop', domain: 'https://www.example.com', timezone: 'Europe/Berlin' });
    });

    it('stores the domain normalised: lower case, default port dropped, international host in punycode', async () => {
      const site = await insertSite(svc.db, svc.accountId);
      expect(json(await patch(site.id, { domain: 'HTTPS://WWW.Example.COM:443' })).domain).toBe('https://www.example.com');
      expect(json(await patch(site.id, { domain: 'http://localhost:8080' })).domain).toBe('http://localhost:8080');
      expect(json(await patch(site.id, { domain: 'https://bücher.example' })).domain).toBe('https://xn--bcher-kva.example');
      expect(json(await patch(site.id, { domain: 'http://127.0.0.1:80' })).domain).toBe('http://127.0.0.1');
      // A site under a public suffix is a site; a host the Public Suffix List does not know is left alone.
      expect(json(await patch(site.id, { domain: 'https://yours.github.io' })).domain).toBe('https://yours.github.io');
      expect(json(await patch(site.id, { domain: 'http://intranet:8080' })).domain).toBe('http://intranet:8080');
    });

    it('clears the domain with null', async () => {
      const site = await insertSite(svc.db, svc.accountId, { domain: 'https://a.example' });
      expect(json(await patch(site.id, { domain: null })).domain).toBeNull();
    });

    it.each([
      ['https://www.example.com/', /slash/],
      ['https://www.example.com/path', /path/],
      ['https://www.example.com?x=1', /query/],
      ['https://www.example.com#top', /fragment/],
      ['https://user:pw@www.example.com', /user info/],
      ['ftp://www.example.com', /http or https/],
      ['www.example.com', /bare origin/],
      ['https://', /host/],
      ['https://exa mple.com', /host/],
      ['https://www.example.com:99999', /host or port/],
      [`https://${'a'.repeat(64)}.example.com`, /part longer than 63 characters/],
      ['https://github.io', /public suffix.*https:\/\/www\.yoursite\.github\.io/],
      ['https://co.uk', /public suffix/],
      ['http://com', /public suffix/],
      [42, /bare origin/],
    ])('rejects the domain %j with a 400 that says why, changing nothing', async (domain, why) => {
      const site = await insertSite(svc.db, svc.accountId, { name: 'Unchanged', domain: 'https://keep.example' });
      const res = await patch(site.id, { name: 'Changed', domain });
      expect(res.statusCode).toBe(400);
      const error = errorOf(res);
      expect(error).toMatchObject({ type: 'invalid_request_error', param: 'domain' });
      expect(error.message).toMatch(why);
      const after = json(await get(`/v1/sites/${site.id}`));
      expect(after).toMatchObject({ name: 'Unchanged', domain: 'https://keep.example' });
    });

    it('accepts real IANA timezone names (UTC and links included) in their proper spelling', async () => {
      const site = await insertSite(svc.db, svc.accountId);
      expect(json(await patch(site.id, { timezone: 'UTC' })).timezone).toBe('UTC');
      expect(json(await patch(site.id, { timezone: 'utc' })).timezone).toBe('UTC');
      expect(json(await patch(site.id, { timezone: 'asia/tokyo' })).timezone).toBe('Asia/Tokyo');
      expect(json(await patch(site.id, { timezone: 'US/Eastern' })).timezone).toBe('US/Eastern');
    });

    it.each(['Mars/Olympus', '+05:00', 'GMT+5', '', '   ', 5, null])('rejects the timezone %j', async (timezone) => {
      const res = await patch(svc.site.id, { timezone });
      expect(res.statusCode).toBe(400);
      expect(errorOf(res).param).toBe('timezone');
      expect(json(await get(`/v1/sites/${svc.site.id}`)).timezone).toBe('America/New_York');
    });

    it.each([
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: null }, 'name'],
      [{ name: 7 }, 'name'],
      [{ site_key: 'mine' }, 'site_key'],
      [{ id: 'site_x' }, 'id'],
      [{ nme: 'typo' }, 'nme'],
    ])('rejects %j naming the parameter %s', async (body, param) => {
      const res = await patch(svc.site.id, body);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res).param).toBe(param);
      expect(json(await get(`/v1/sites/${svc.site.id}`)).name).toBe('My Website');
    });

    it.each([['[]'], ['"name"'], ['null'], ['17']])('rejects the JSON body %s: it must be an object', async (payload) => {
      const res = await svc.app.inject({
        method: 'PATCH', url: `/v1/sites/${svc.site.id}`, payload,
        headers: { ...svc.auth, 'content-type': 'application/json' },
      });
      expect(res.statusCode).toBe(400);
      expect(errorOf(res).code).toBe('invalid_body');
    });

    it('answers malformed JSON with the error envelope', async () => {
      const res = await svc.app.inject({
        method: 'PATCH', url: `/v1/sites/${svc.site.id}`, payload: '{"name":',
        headers: { ...svc.auth, 'content-type': 'application/json' },
      });
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    });

    it('sets the loader settings honor_gpc and correlation_ttl_seconds, read back through the public loader config', async () => {
      const site = await insertSite(svc.db, svc.accountId, { name: 'loader settings' });
      const res = await patch(site.id, { honor_gpc: false, correlation_ttl_seconds: 600 });
      expect(res.statusCode).toBe(200);
      expect(Object.keys(json(res)).sort()).toEqual(SITE_FIELDS);
      const config = json(await svc.app.inject({ method: 'GET', url: `/collect/v1/sites/${site.site_key}/config` }));
      expect(config).toMatchObject({ honor_gpc: false, correlation_ttl_seconds: 600 });
    });

    it.each([
      [{ honor_gpc: 'no' }, 'honor_gpc'],
      [{ correlation_ttl_seconds: 30 }, 'correlation_ttl_seconds'],
      [{ correlation_ttl_seconds: 1.5 }, 'correlation_ttl_seconds'],
      [{ correlation_ttl_seconds: 86_401 }, 'correlation_ttl_seconds'],
    ])('rejects the loader setting %j and changes nothing', async (payload, param) => {
      const site = await insertSite(svc.db, svc.accountId, { name: 'unchanged' });
      const res = await patch(site.id, { ...payload, name: 'changed' });
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'parameter_invalid', param });
      const config = json(await svc.app.inject({ method: 'GET', url: `/collect/v1/sites/${site.site_key}/config` }));
      expect(config).toMatchObject({ honor_gpc: true, correlation_ttl_seconds: 1800 });
      expect(json(await get(`/v1/sites/${site.id}`)).name).toBe('unchanged');
    });

    it('answers a NUL character in a name with 400 invalid_json and changes nothing', async () => {
      const site = await insertSite(svc.db, svc.accountId, { name: 'before nul' });
      const res = await patch(site.id, { name: 'a\u0000b' });
      expect(res.statusCode).toBe(400);
      expect(errorOf(res).code).toBe('invalid_json');
      expect(json(await get(`/v1/sites/${site.id}`)).name).toBe('before nul');
    });

    it('answers 404 for an unknown site', async () => {
      const res = await patch('site_nope', { name: 'x' });
      expect(res.statusCode).toBe(404);
      expect(errorOf(res).code).toBe('resource_missing');
    });
  });

  describe('POST /v1/sites', () => {
    it('creates a site with the defaults for what is not sent (201)', async () => {
      const res = await svc.app.inject({ method: 'POST', url: '/v1/sites', headers: svc.auth, payload: {} });
      expect(res.statusCode).toBe(201);
      expect(json(res)).toMatchObject({ name: 'My Website', domain: null, timezone: 'America/New_York' });
    });

    it('creates a site with the fields sent, validated like PATCH', async () => {
      const ok = await svc.app.inject({
        method: 'POST', url: '/v1/sites', headers: svc.auth,
        payload: { name: 'Blog', domain: 'https://Blog.Example.com', timezone: 'Europe/Paris' },
      });
      expect(json(ok)).toMatchObject({ name: 'Blog', domain: 'https://blog.example.com', timezone: 'Europe/Paris' });
      const before = (await svc.db.query<{ n: number }>('select count(*)::int as n from sites'))[0]!.n;
      const bad = await svc.app.inject({ method: 'POST', url: '/v1/sites', headers: svc.auth, payload: { name: 'X', domain: 'https://x.example/' } });
      expect(bad.statusCode).toBe(400);
      expect((await svc.db.query<{ n: number }>('select count(*)::int as n from sites'))[0]!.n).toBe(before);
    });
  });
});
