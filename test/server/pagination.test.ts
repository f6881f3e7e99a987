import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService } from './support/rest-harness';
import { insertSite } from '../../src/server/api/sites/sql';

describe.each(DATABASE_KINDS)('list pagination (GET /v1/sites) on $name', (kind) => {
  let svc: RestService;
  /** Every site id of the account in creation order. */
  let all: string[];
  beforeAll(async () => {
    svc = await createRestService(kind);
    all = [svc.site.id];
    for (let i = 0; i < 104; i++) all.push((await insertSite(svc.db, svc.accountId, { name: `Site ${i}` })).id);
    // Another account's sites interleave in the table but never in this account's list.
    const other = await svc.addTenant('Other');
    await insertSite(svc.db, other.accountId);
  });
  afterAll(() => svc.close());

  const list = async (query: string) => {
    const res = await svc.app.inject({ method: 'GET', url: `/v1/sites${query}`, headers: svc.auth });
    return res;
  };

  it('returns 100 items by default, oldest first, with has_more and next_cursor = the last id', async () => {
    const body = json(await list(''));
    expect(body.data).toHaveLength(100);
    expect(body.data.map((s: { id: string }) => s.id)).toEqual(all.slice(0, 100));
    expect(body.has_more).toBe(true);
    expect(body.next_cursor).toBe(all[99]);
  });

  it('walks forward with starting_after = next_cursor, returning every item exactly once in order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body: { data: Array<{ id: string }>; has_more: boolean; next_cursor: string | null } = json(await list(`?limit=7${cursor ? `&starting_after=${cursor}` : ''}`));
      seen.push(...body.data.map((s) => s.id));
      expect(body.data.length).toBeLessThanOrEqual(7);
      cursor = body.has_more ? body.next_cursor : null;
      if (!body.has_more) expect(body.next_cursor).toBeNull();
      pages++;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 7));
  });

  it('walks backward with ending_before, each page ascending, returning every earlier item exactly once', async () => {
    const last = all[all.length - 1]!;
    const pages: string[][] = [];
    let cursor: string | null = last;
    while (cursor) {
      const body: { data: Array<{ id: string }>; has_more: boolean; next_cursor: string | null } = json(await list(`?limit=10&ending_before=${cursor}`));
      const ids = body.data.map((s) => s.id);
      pages.push(ids);
      expect(ids).toEqual(all.slice(all.indexOf(ids[0]!), all.indexOf(ids[0]!) + ids.length));
      cursor = body.has_more ? body.next_cursor : null;
      if (body.has_more) expect(body.next_cursor).toBe(ids[0]);
      else expect(body.next_cursor).toBeNull();
    }
    expect(pages.reverse().flat()).toEqual(all.slice(0, -1));
  });

  it('answers an empty last page when the cursor is the last item', async () => {
    const body = json(await list(`?starting_after=${all[all.length - 1]}`));
    expect(body).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it('accepts limit up to 1000', async () => {
    const body = json(await list('?limit=1000'));
    expect(body.data).toHaveLength(all.length);
    expect(body.has_more).toBe(false);
    expect(body.next_cursor).toBeNull();
  });

  it.each(['0', '1001', '-1', 'abc', '1.5', '', '10abc'])('rejects limit=%s with 400 naming limit', async (limit) => {
    const res = await list(`?limit=${limit}`);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'limit' });
  });

  it('rejects a repeated limit', async () => {
    const res = await list('?limit=1&limit=2');
    expect(res.statusCode).toBe(400);
    expect(errorOf(res).param).toBe('limit');
  });

  it('rejects starting_after together with ending_before (parameter_conflict on ending_before)', async () => {
    const res = await list(`?starting_after=${all[1]}&ending_before=${all[5]}`);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'parameter_conflict', param: 'ending_before' });
  });

  it.each(['starting_after', 'ending_before'])('answers an unknown %s cursor with 400 invalid_cursor naming it', async (param) => {
    for (const value of ['site_unknown', 'nonsense', '']) {
      const res = await list(`?${param}=${value}`);
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_cursor', param });
    }
  });

  it("does not resolve another account's id as a cursor", async () => {
    const other = await svc.addTenant('Cursor thief');
    const res = await list(`?starting_after=${other.site.id}`);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });

  it('rejects unknown query parameters', async () => {
    const res = await list('?page=2');
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'parameter_unknown', param: 'page' });
  });
});
