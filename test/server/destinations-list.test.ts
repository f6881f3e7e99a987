/** GET /v1/destinations pages like every other list: limit, starting_after, ending_before, the same refusals. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService } from './support/rest-harness';
import { upsertDestination } from '../../src/server/destinations/sql';
import { supportedDestinationTypes } from '../../src/server/destinations';

type Page = { data: Array<{ id: string; type: string }>; has_more: boolean; next_cursor: string | null };

describe.each(DATABASE_KINDS)('GET /v1/destinations pagination on $name', (kind) => {
  let svc: RestService;
  /** Every destination id of the account in creation order. */
  let all: string[];
  let otherAccountsDestination: string;
  beforeAll(async () => {
    svc = await createRestService(kind);
    const other = await svc.addTenant('Other');
    const types = supportedDestinationTypes();
    expect(types.length).toBeGreaterThanOrEqual(5);
    all = [];
    for (const type of types) {
      all.push((await upsertDestination(svc.db, svc.accountId, type, { n: all.length })).id);
      // Another account's connections interleave in the table but never in this account's list.
      otherAccountsDestination = (await upsertDestination(svc.db, other.accountId, type, {})).id;
    }
    // A reconnect replaces the connection in place: same id, same place in the list.
    expect((await upsertDestination(svc.db, svc.accountId, types[1]!, { n: 'again' })).id).toBe(all[1]);
  });
  afterAll(() => svc.close());

  const list = (query: string) => svc.app.inject({ method: 'GET', url: `/v1/destinations${query}`, headers: svc.auth });

  it('lists every connection oldest first by default', async () => {
    const body = json<Page>(await list(''));
    expect(body.data.map((d) => d.id)).toEqual(all);
    expect(body).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('walks forward with limit and starting_after = next_cursor, every item exactly once in order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`?limit=2${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = json<Page>(res);
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((d) => d.id));
      if (body.has_more) expect(body.next_cursor).toBe(body.data[body.data.length - 1]!.id);
      else expect(body.next_cursor).toBeNull();
      cursor = body.has_more ? body.next_cursor : null;
      pages++;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 2));
  });

  it('walks backward with ending_before, each page ascending, every earlier item exactly once', async () => {
    const pages: string[][] = [];
    let cursor: string | null = all[all.length - 1]!;
    while (cursor) {
      const res = await list(`?limit=2&ending_before=${cursor}`);
      expect(res.statusCode).toBe(200);
      const body = json<Page>(res);
      const ids = body.data.map((d) => d.id);
      pages.push(ids);
      if (body.has_more) expect(body.next_cursor).toBe(ids[0]);
      else expect(body.next_cursor).toBeNull();
      cursor = body.has_more ? body.next_cursor : null;
    }
    expect(pages.reverse().flat()).toEqual(all.slice(0, -1));
  });

  it('answers an empty page after the last connection, and takes limit from 1 to 1000', async () => {
    expect(json(await list(`?starting_after=${all[all.length - 1]}`))).toEqual({ data: [], has_more: false, next_cursor: null });
    expect(json<Page>(await list('?limit=1')).data.map((d) => d.id)).toEqual([all[0]]);
    expect(json<Page>(await list('?limit=1000')).data).toHaveLength(all.length);
  });

  it.each(['0', '1001', '-1', 'abc', '1.5', ''])('refuses limit=%s with 400 parameter_invalid naming limit', async (limit) => {
    const res = await list(`?limit=${limit}`);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'limit' });
  });

  it('refuses starting_after together with ending_before (parameter_conflict on ending_before)', async () => {
    const res = await list(`?starting_after=${all[0]}&ending_before=${all[3]}`);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'parameter_conflict', param: 'ending_before' });
  });

  it.each(['starting_after', 'ending_before'])('answers a %s that is no destination of this account with 400 invalid_cursor', async (param) => {
    for (const value of ['dst_unknown', 'nonsense', '', svc.site.id, otherAccountsDestination]) {
      const res = await list(`?${param}=${encodeURIComponent(value)}`);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_cursor', param });
    }
  });

  it('still refuses query parameters it does not take', async () => {
    const res = await list('?page=2');
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'parameter_unknown', param: 'page' });
  });
});
