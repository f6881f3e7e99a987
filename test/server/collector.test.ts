import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from './support/harness';
import { DATABASE_KINDS } from './support/databases';
import { newToken, setSiteDomain, snapshotBody } from './support/fixtures';
import { configPath, snapshotsPath, SNAPSHOT_CONTENT_TYPE, SNAPSHOT_MAX_BYTES, type Snapshot } from '../../src/protocol/collector';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { findSnapshot, upsertSnapshots } from '../../src/server/collector/sql';
import { SnapshotWriter } from '../../src/server/collector/snapshot-writer';

const ORIGIN = 'https://www.example.com';

describe('collector routes', () => {
  let svc: TestService;
  beforeAll(async () => {
    // The collector's clock: half a minute after the fixtures' snapshots were sent (visitor-clock.ts sets a clock
    // farther off right).
    svc = await createTestService({}, { now: () => new Date(Date.parse(snapshotBody().occurred_at) + 30_000) });
    await setSiteDomain(svc.db, svc.site.id, 'https://example.com');
  });
  afterAll(() => svc.close());

  const post = (body: unknown, headers: Record<string, string> = { origin: ORIGIN }, siteKey = svc.site.site_key) =>
    svc.app.inject({
      method: 'POST',
      url: snapshotsPath(siteKey),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  describe('GET config', () => {
    it('returns the site config, readable from any origin and briefly cacheable', async () => {
      const res = await svc.app.inject({ method: 'GET', url: configPath(svc.site.site_key), headers: { origin: ORIGIN } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        site_key: svc.site.site_key, domain: 'https://example.com', cookie_domain: 'example.com',
        correlation_ttl_seconds: 1800, honor_gpc: true, forms: [],
      });
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cache-control']).toBe('public, max-age=60');
    });

    it('answers an unknown site key with a 404 envelope the loader can read', async () => {
      const res = await svc.app.inject({ method: 'GET', url: configPath('nosuchkey123') });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ type: 'not_found_error', code: 'site_not_found' });
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });

    it('shows a domain changed a moment ago', async () => {
      const other = await insertSite(svc.db, svc.accountId, { domain: 'https://a.example' });
      await svc.app.inject({ method: 'GET', url: configPath(other.site_key) });
      await setSiteDomain(svc.db, other.id, 'https://b.example');
      const res = await svc.app.inject({ method: 'GET', url: configPath(other.site_key) });
      expect(res.json().domain).toBe('https://b.example');
    });
  });

  describe('POST snapshots', () => {
    it('stores a snapshot from the site origin and answers 204 with that origin allowed', async () => {
      const body = snapshotBody();
      const res = await post(body);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers.vary).toMatch(/Origin/);
      const row = await findSnapshot(svc.db, svc.site.id, body.correlation_token);
      expect(row).toMatchObject({ trigger: 'form_submit', page_url: body.page_url, touch: body.touch, cookies: body.cookies });
      expect(row!.occurred_at.toISOString()).toBe(body.occurred_at);
    });

    it("stores the page, landing and referrer without the tokens a sign-in redirect leaves in them", async () => {
      const base = snapshotBody();
      const body = {
        ...base,
        page_url: 'https://www.example.com/welcome?plan=pro#access_token=eyJhbGciOi.secret&expires_in=3600&refresh_token=r3fr3sh&type=signup',
        referrer: 'https://auth.example.net/cb?state=s1&ID_TOKEN=eyJraWQi.secret',
        touch: { ...base.touch!, landing_page_url: 'https://www.example.com/#/start?access_token=eyJ.secret', referrer: null },
      };
      expect((await post(body)).statusCode).toBe(204);
      const row = await findSnapshot(svc.db, svc.site.id, body.correlation_token);
      expect(row).toMatchObject({
        page_url: 'https://www.example.com/welcome?plan=pro#expires_in=3600&type=signup',
        referrer: 'https://auth.example.net/cb?state=s1',
        touch: { landing_page_url: 'https://www.example.com/#/start' },
      });
      expect(JSON.stringify(row)).not.toMatch(/secret|r3fr3sh/);
      // A token last in the query, or alone in it, leaves no separator before the fragment.
      for (const [sent, stored] of [
        ['https://www.example.com/welcome?plan=pro&access_token=eyJ.secret#done', 'https://www.example.com/welcome?plan=pro#done'],
        ['https://www.example.com/welcome?id_token=eyJ.secret#done', 'https://www.example.com/welcome#done'],
        // A name spelled with percent escapes is the name it decodes to.
        ['https://www.example.com/welcome?plan=pro&access_%74%6Fken=eyJ.secret', 'https://www.example.com/welcome?plan=pro'],
      ]) {
        const tokenInQuery = { ...snapshotBody(), page_url: sent };
        expect((await post(tokenInQuery)).statusCode).toBe(204);
        expect((await findSnapshot(svc.db, svc.site.id, tokenInQuery.correlation_token))!.page_url).toBe(stored);
      }
      // An address without any is stored exactly as sent.
      const plain = { ...snapshotBody(), page_url: 'https://www.example.com/signup?a=1&&b=2&tokens=3&q=access%5Ftoken#/step?' };
      expect((await post(plain)).statusCode).toBe(204);
      expect((await findSnapshot(svc.db, svc.site.id, plain.correlation_token))!.page_url).toBe(plain.page_url);
    });

    it('accepts subdomains of the site domain and an application/json body', async () => {
      const body = snapshotBody();
      const res = await post(body, { origin: 'https://app.example.com', 'content-type': 'application/json' });
      expect(res.statusCode).toBe(204);
      expect(await findSnapshot(svc.db, svc.site.id, body.correlation_token)).not.toBeNull();
    });

    it.each([
      ['no Origin header', {}],
      ['a foreign origin', { origin: 'https://evil.example' }],
      ['another scheme', { origin: 'http://www.example.com' }],
      ['a look-alike host', { origin: 'https://notexample.com' }],
      ['an opaque origin', { origin: 'null' }],
    ])('refuses %s with 403 and stores nothing', async (_label, headers) => {
      const body = snapshotBody();
      const res = await post(body, headers as Record<string, string>);
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toMatchObject({ type: 'permission_error', code: 'origin_not_allowed' });
      expect(await findSnapshot(svc.db, svc.site.id, body.correlation_token)).toBeNull();
    });

    it('refuses every origin while the site has no domain', async () => {
      const bare = await insertSite(svc.db, svc.accountId);
      const res = await post(snapshotBody(), { origin: ORIGIN }, bare.site_key);
      expect(res.statusCode).toBe(403);
      expect(res.json().error.message).toMatch(/no domain/);
    });

    it('accepts the new origin at once after the domain changes', async () => {
      const site = await insertSite(svc.db, svc.accountId, { domain: 'https://old.example' });
      expect((await post(snapshotBody(), { origin: 'https://old.example' }, site.site_key)).statusCode).toBe(204);
      await setSiteDomain(svc.db, site.id, 'https://new.example');
      expect((await post(snapshotBody(), { origin: 'https://new.example' }, site.site_key)).statusCode).toBe(204);
    });

    it('answers an unknown site key with 404', async () => {
      const res = await post(snapshotBody(), { origin: ORIGIN }, 'nosuchkey123');
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('site_not_found');
    });

    it('answers a body that is not JSON with 400 invalid_json', async () => {
      const res = await post('{"correlation_token": ');
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_json');
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });

    it('answers an empty body with 400', async () => {
      const res = await svc.app.inject({ method: 'POST', url: snapshotsPath(svc.site.site_key), headers: { origin: ORIGIN } });
      expect(res.statusCode).toBe(400);
    });

    const touch = snapshotBody().touch!;
    it.each<[string, Record<string, unknown>]>([
      ['correlation_token', { correlation_token: 'too-short' }],
      ['correlation_token', { correlation_token: undefined }],
      ['occurred_at', { occurred_at: 'yesterday' }],
      ['occurred_at', { occurred_at: '2026-02-31T10:00:00Z' }],
      ['trigger', { trigger: 'click' }],
      ['page_url', { page_url: 'javascript:alert(1)' }],
      ['page_url', { page_url: 42 }],
      ['referrer', { referrer: 7 }],
      ['touch', { touch: 'gclid=1' }],
      ['touch.click_ids.gclid', { touch: { ...touch, click_ids: { gclid: 5 } } }],
      ['touch.click_ids.gclid', { touch: { ...touch, click_ids: { gclid: 'x'.repeat(501) } } }],
      ['touch.captured_at', { touch: { ...touch, captured_at: null } }],
      ['touch.landing_page_url', { touch: { ...touch, landing_page_url: 'not a url' } }],
      ['cookies', { cookies: [] }],
    ])('answers a snapshot with a bad %s with 400 naming it', async (param, overrides) => {
      const res = await post({ ...snapshotBody(), ...overrides });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ type: 'invalid_request_error', param });
    });

    it('keeps the known signals of a snapshot from a newer loader and drops the keys it does not know', async () => {
      const body = snapshotBody({
        touch: { ...touch, click_ids: { ...touch.click_ids, xclid: 'future' }, utm: { ...touch.utm, utm_foo: 'x' }, extra: 1 },
        cookies: { _fbp: 'fb.1.2.3', _ga: 'GA1.1' },
      } as never);
      const res = await post(body);
      expect(res.statusCode).toBe(204);
      const stored = await findSnapshot(svc.db, svc.site.id, body.correlation_token);
      expect(stored?.touch?.click_ids).toEqual(touch.click_ids);
      expect(stored?.touch?.utm).toEqual(touch.utm);
      expect(stored?.touch).not.toHaveProperty('extra');
      expect(stored?.cookies).toEqual({ _fbp: 'fb.1.2.3' });
    });

    it('answers a NUL character in a signal with 400 invalid_json, and stores nothing', async () => {
      const body = snapshotBody({ touch: { ...touch, click_ids: { gclid: 'a\u0000b' } } });
      const res = await post(body);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_json');
      expect(await findSnapshot(svc.db, svc.site.id, body.correlation_token)).toBeNull();
    });

    it('answers a JSON array body with 400', async () => {
      expect((await post([snapshotBody()])).statusCode).toBe(400);
    });

    it('refuses a body over 16 KB with 413 and stores nothing', async () => {
      const body = snapshotBody({ page_url: `https://www.example.com/?q=${'x'.repeat(SNAPSHOT_MAX_BYTES)}` });
      const res = await post(body);
      expect(res.statusCode).toBe(413);
      expect(res.json().error.code).toBe('payload_too_large');
      expect(await findSnapshot(svc.db, svc.site.id, body.correlation_token)).toBeNull();
    });

    it('keeps the stored click data when a later snapshot of the same token has no touch', async () => {
      const first = snapshotBody();
      await post(first);
      const later = snapshotBody({ correlation_token: first.correlation_token, occurred_at: '2026-11-21T09:31:00.000Z', touch: null, cookies: {} });
      expect((await post(later)).statusCode).toBe(204);
      const row = await findSnapshot(svc.db, svc.site.id, first.correlation_token);
      expect(row!.touch).toEqual(first.touch);
      expect(row!.cookies).toEqual(first.cookies);
      expect(row!.occurred_at.toISOString()).toBe(first.occurred_at);
    });

    it("stores a snapshot from a visitor whose clock says 0001 on the service's clock, with its click", async () => {
      const received = new Date(Date.parse(snapshotBody().occurred_at) + 30_000);
      const body = snapshotBody({ occurred_at: '0001-01-01T01:00:00.000Z', touch: { ...snapshotBody().touch!, captured_at: '0001-01-01T00:00:00.000Z' } });
      const res = await post(body);
      expect(res.statusCode).toBe(204);
      const row = await findSnapshot(svc.db, svc.site.id, body.correlation_token);
      expect(row!.occurred_at.toISOString()).toBe(received.toISOString());
      expect(row!.touch).toMatchObject({ click_ids: body.touch!.click_ids, captured_at: new Date(received.getTime() - 3_600_000).toISOString() });
    });
  });

  describe('OPTIONS snapshots (CORS preflight)', () => {
    it('allows the site origin to POST', async () => {
      const res = await svc.app.inject({
        method: 'OPTIONS', url: snapshotsPath(svc.site.site_key),
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers['access-control-allow-methods']).toBe('POST');
      expect(res.headers['access-control-allow-headers']).toMatch(/content-type/i);
    });

    it('gives a foreign origin no CORS permission', async () => {
      const res = await svc.app.inject({
        method: 'OPTIONS', url: snapshotsPath(svc.site.site_key),
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(res.statusCode).toBe(403);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});

describe.each(DATABASE_KINDS)('snapshot store on $name', (kind) => {
  let db: Database;
  let siteId: string;
  beforeAll(async () => {
    db = await kind.open();
    const account = await insertAccount(db, 'a');
    siteId = (await insertSite(db, account.id, { domain: 'https://example.com' })).id;
  });
  afterAll(() => db.close());

  async function storeInTurn(...snapshots: Snapshot[]) {
    for (const snapshot of snapshots) await upsertSnapshots(db, [{ siteId, snapshot }]);
    return (await findSnapshot(db, siteId, snapshots[0]!.correlation_token))!;
  }

  it('keeps the earliest occurred_at and the first page, filling only what was missing', async () => {
    const token = newToken();
    const row = await storeInTurn(
      snapshotBody({ correlation_token: token, occurred_at: '2026-11-21T09:30:00.000Z', referrer: null }),
      snapshotBody({ correlation_token: token, occurred_at: '2026-11-21T09:29:00.000Z', page_url: 'https://www.example.com/other', referrer: 'https://r.example/' }),
    );
    expect(row.occurred_at.toISOString()).toBe('2026-11-21T09:29:00.000Z');
    expect(row.page_url).toBe('https://www.example.com/signup');
    expect(row.referrer).toBe('https://r.example/');
  });

  it('keeps the stored touch whole against a touch captured at the same time, and keeps every click id it brought', async () => {
    const token = newToken();
    const first = snapshotBody({ correlation_token: token });
    const later = snapshotBody({
      correlation_token: token,
      touch: { ...first.touch!, click_ids: { gclid: 'other-gclid', fbclid: 'fb-1' }, utm: { utm_source: 'facebook' } },
    });
    const row = await storeInTurn(first, later);
    expect(row.touch).toEqual(first.touch);
    expect(row.received_click_ids).toEqual({ gclid: ['Cj0KCQ-gclid-1', 'other-gclid'], fbclid: ['fb-1'] });
  });

  it('lets a touch with click ids replace a stored UTM-only touch, but not the other way round', async () => {
    const utmOnly = { ...snapshotBody().touch!, click_ids: {}, utm: { utm_source: 'newsletter' } };
    const clicked = snapshotBody().touch!;
    const a = newToken();
    expect((await storeInTurn(snapshotBody({ correlation_token: a, touch: utmOnly }), snapshotBody({ correlation_token: a, touch: clicked }))).touch).toEqual(clicked);
    const b = newToken();
    expect((await storeInTurn(snapshotBody({ correlation_token: b, touch: clicked }), snapshotBody({ correlation_token: b, touch: utmOnly }))).touch).toEqual(clicked);
  });

  it('adopts a touch when the stored snapshot had none, and merges cookies with stored values winning', async () => {
    const token = newToken();
    const row = await storeInTurn(
      snapshotBody({ correlation_token: token, touch: null, cookies: { _fbp: 'first' } }),
      snapshotBody({ correlation_token: token, cookies: { _fbp: 'second', _gcl_au: 'au' } }),
    );
    expect(row.touch!.click_ids).toEqual({ gclid: 'Cj0KCQ-gclid-1' });
    expect(row.cookies).toEqual({ _fbp: 'first', _gcl_au: 'au' });
  });

  it('writes a batch of many snapshots in one statement', async () => {
    const batch = Array.from({ length: 300 }, () => ({ siteId, snapshot: snapshotBody() }));
    await upsertSnapshots(db, batch);
    const [{ n }] = (await db.query<{ n: number }>(
      'select count(*)::int as n from snapshots where correlation_token = any($1::text[])',
      [batch.map((w) => w.snapshot.correlation_token)],
    )) as [{ n: number }];
    expect(n).toBe(300);
  });

  it('group-commits concurrent writes, merging repeats of a token in arrival order', async () => {
    const calls: number[] = [];
    const writer = new SnapshotWriter(db, {
      upsert: (q, writes) => {
        calls.push(writes.length);
        return upsertSnapshots(q, writes);
      },
    });
    const token = newToken();
    const others = Array.from({ length: 40 }, () => snapshotBody());
    await Promise.all([
      writer.write({ siteId, snapshot: snapshotBody({ correlation_token: token }) }),
      ...others.map((snapshot) => writer.write({ siteId, snapshot })),
      writer.write({ siteId, snapshot: snapshotBody({ correlation_token: token, touch: null }) }),
    ]);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(42);
    expect(calls.length).toBeLessThan(42);
    expect((await findSnapshot(db, siteId, token))!.touch!.click_ids).toEqual({ gclid: 'Cj0KCQ-gclid-1' });
    for (const s of others) expect(await findSnapshot(db, siteId, s.correlation_token)).not.toBeNull();
  });

  it('settles each caller by its own outcome when a batch fails', async () => {
    const writer = new SnapshotWriter(db);
    const good = snapshotBody();
    const bad = snapshotBody({ occurred_at: 'not a time' }); // bypasses validation to make the statement fail
    const results = await Promise.allSettled([
      writer.write({ siteId, snapshot: good }),
      writer.write({ siteId, snapshot: bad }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(await findSnapshot(db, siteId, good.correlation_token)).not.toBeNull();
  });

  it('writes what is still buffered when flushed on close', async () => {
    const writer = new SnapshotWriter(db, { maxDelayMs: 50 });
    const snapshot = snapshotBody();
    const written = writer.write({ siteId, snapshot });
    await writer.flush();
    await written;
    expect(await findSnapshot(db, siteId, snapshot.correlation_token)).not.toBeNull();
  });
});
