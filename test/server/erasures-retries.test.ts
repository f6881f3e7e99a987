/**
 * Erasures and the retries that follow them, on both stores: a backend retrying an erased person's report or adjustment
 * (its customer_event_id or adjustment_id replaced by the erasure) gets the first answer and writes nothing, the person
 * can always be erased again, an erased conversion takes no new adjustment, and an adjustment_id reused for another
 * adjustment is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService, type Tenant } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow } from './support/fixtures';
import { adjustmentPath, saasSignupPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { recordReports } from '../../src/server/webhook/report';
import { erasedIdHash, erasureHash } from '../../src/server/api/erasures';

const SECRET = 'whsec_erasure_retries_secret_0123456789';

describe.each(DATABASE_KINDS)('retries after an erasure on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  let seq = 0;
  async function tenant(): Promise<Tenant> {
    const who = await svc.addTenant(`Retries ${++seq}`);
    await connectApiTrigger(svc.db, { id: who.site.id, account_id: who.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: who.site.id, account_id: who.accountId }, { triggerKey: 'signup' });
    return who;
  }
  const post = (path: string, body: unknown) => {
    const payload = JSON.stringify(body);
    return svc.app.inject({
      method: 'POST', url: path, payload,
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: SECRET, path, body: payload }) },
    });
  };
  const signup = (who: Tenant, body: Record<string, unknown>) =>
    post(saasSignupPath(who.site.site_key, 'signup'), { allow_uncorrelated: true, correlation_token: null, ...body });
  const adjust = (who: Tenant, body: Record<string, unknown>) => post(adjustmentPath(who.site.site_key), body);
  const erase = (who: Tenant, body: unknown) =>
    svc.app.inject({ method: 'POST', url: '/v1/erasures', headers: { ...who.auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  /** The account's stored rows of a table (reports, adjustments by site; events by account), as lower-cased text and a count. */
  const rowsOf = async (who: Tenant, table: 'reports' | 'adjustments' | 'events') => {
    const rows = await svc.db.query(
      table === 'events' ? 'select * from events where account_id = $1' : `select * from ${table} where site_id = $1`,
      [table === 'events' ? who.accountId : who.site.id],
    );
    return { n: rows.length, text: JSON.stringify(rows).toLowerCase() };
  };

  it("answers a retry of an erased person's report as a repeat, writes nothing, and erases the person again", async () => {
    const who = await tenant();
    const email = 'grace.hopper@example.com';
    const ceid = `signup-${email}`;
    const first = await signup(who, { customer_event_id: ceid, email, first_name: 'Grace' });
    expect(json(first)).toEqual({ status: 'promoted', promoted_count: 1, customer_event_id: ceid, correlated: false });
    expect(json(await erase(who, { email })).matched).toMatchObject({ reports: 1, events: 1 });
    const before = { reports: await rowsOf(who, 'reports'), events: await rowsOf(who, 'events') };
    expect(before.reports.text).not.toContain('grace');

    // The backend retries (its first attempt timed out, say): the first answer, with its own id, and nothing written.
    for (let i = 0; i < 2; i++) {
      const retry = await signup(who, { customer_event_id: ceid, email, first_name: 'Grace' });
      expect(retry.statusCode).toBe(200);
      expect(json(retry)).toEqual(json(first));
    }
    expect(await rowsOf(who, 'reports')).toEqual(before.reports);
    expect(await rowsOf(who, 'events')).toEqual(before.events);
    // So during a burst (the reports stored first, their events built after it).
    const site = { id: who.site.id, account_id: who.accountId, site_key: who.site.site_key };
    const hash = erasedIdHash(erasureHash(svc.settings))(who.site.id, 'customer_event_id', ceid);
    const [burst] = await recordReports(svc.db, [{
      site, triggerKey: 'signup', now: new Date(), erasedIdHash: hash,
      report: { customer_event_id: ceid, correlation_token: null, identity: { email }, allow_uncorrelated: true },
    }], { defer: true });
    expect(burst).toMatchObject({ ok: true, response: json(first), deferred: false });
    expect(await rowsOf(who, 'reports')).toEqual(before.reports);

    // Erasing the person again always works (a repeat: nothing left to match).
    const again = await erase(who, { email });
    expect(again.statusCode).toBe(200);
    expect(json(again)).toMatchObject({ matched: { reports: 0, events: 0 }, repeat_of: expect.stringMatching(/^era_/) });
  });

  it('erases a person twice even when a retry of the erased report was stored again (before retries were recognised)', async () => {
    const who = await tenant();
    const email = 'katherine.j@example.com';
    const ceid = `signup-${email}`;
    expect((await signup(who, { customer_event_id: ceid, email })).statusCode).toBe(200);
    expect((await erase(who, { email })).statusCode).toBe(200);
    // What an erasure before this version left: no keyed hash on the erased report, so the retry was stored again.
    await svc.db.query('update reports set erased_id_hash = null where site_id = $1', [who.site.id]);
    expect(json(await signup(who, { customer_event_id: ceid, email }))).toMatchObject({ customer_event_id: ceid, promoted_count: 1 });
    expect((await rowsOf(who, 'reports')).n).toBe(2);

    const second = await erase(who, { email });
    expect(second.statusCode).toBe(200);
    expect(json(second).matched).toMatchObject({ reports: 1, events: 1 });
    const ids = (await svc.db.query<{ customer_event_id: string }>('select customer_event_id from reports where site_id = $1', [who.site.id]))
      .map((r) => r.customer_event_id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^erased_/);
  });

  it('answers a retry of an erased adjustment as a repeat and refuses a new adjustment of an erased conversion', async () => {
    const who = await tenant();
    const email = 'ada.l@example.com';
    const order = 'order-8812';
    const named = `signup-${email}`;
    expect((await signup(who, { customer_event_id: order, email, value: 29, currency: 'EUR' })).statusCode).toBe(200);
    expect((await signup(who, { customer_event_id: named, email })).statusCode).toBe(200);
    const refund = { adjustment_id: `refund-${email}`, customer_event_id: order, type: 'restate', value: 19, currency: 'EUR' };
    const first = await adjust(who, refund);
    expect(json(first)).toEqual({ status: 'accepted', adjustment_id: refund.adjustment_id, events: 1 });
    expect(json(await erase(who, { email })).matched).toMatchObject({ reports: 2 });
    const before = await rowsOf(who, 'adjustments');
    expect(before.n).toBe(1);
    expect(before.text).not.toContain(email);

    // The retry of the erased adjustment (its id replaced): the first answer, nothing stored.
    const retry = await adjust(who, refund);
    expect(retry.statusCode).toBe(200);
    expect(json(retry)).toEqual(json(first));
    // The same id for another adjustment is still refused.
    const other = await adjust(who, { ...refund, value: 9 });
    expect(other.statusCode).toBe(409);
    expect(errorOf(other)).toMatchObject({ code: 'adjustment_id_reused', param: 'adjustment_id' });
    // A new adjustment of the erased conversion, by its kept id or by its replaced one: refused, nothing stored.
    for (const customerEventId of [order, named]) {
      const res = await adjust(who, { adjustment_id: `refund-2-${customerEventId}`, customer_event_id: customerEventId, type: 'retract' });
      expect(res.statusCode, customerEventId).toBe(409);
      expect(errorOf(res)).toMatchObject({ type: 'conflict_error', code: 'conversion_erased', param: 'customer_event_id' });
      expect(errorOf(res).message).toContain('erased');
    }
    expect(await rowsOf(who, 'adjustments')).toEqual(before);
  });

  it('erases a person again when an erased adjustment was stored again (before retries were recognised)', async () => {
    const who = await tenant();
    const email = 'mary.s@example.com';
    expect((await signup(who, { customer_event_id: 'order-77', email })).statusCode).toBe(200);
    const refund = { adjustment_id: `refund-${email}`, customer_event_id: 'order-77', type: 'retract' };
    expect((await adjust(who, refund)).statusCode).toBe(200);
    expect((await erase(who, { email })).statusCode).toBe(200);
    // What an erasure before this version left (no keyed hash), then a later order of hers adjusted with the same id:
    // stored, since the first adjustment's id was replaced.
    await svc.db.query('update adjustments set erased_id_hash = null where site_id = $1', [who.site.id]);
    expect((await signup(who, { customer_event_id: 'order-78', email })).statusCode).toBe(200);
    expect(json(await adjust(who, { ...refund, customer_event_id: 'order-78' }))).toMatchObject({ status: 'accepted', events: 1 });
    const again = await erase(who, { email: 'MARY.S@example.com' });
    expect(again.statusCode).toBe(200);
    const ids = (await svc.db.query<{ adjustment_id: string }>('select adjustment_id from adjustments where site_id = $1', [who.site.id])).map((r) => r.adjustment_id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^erased_/);
  });

  it('answers a repeated adjustment as the first, and refuses an adjustment_id reused for another adjustment with a 409', async () => {
    const who = await tenant();
    for (const ceid of ['inv-1', 'inv-2']) expect((await signup(who, { customer_event_id: ceid, value: 29, currency: 'EUR' })).statusCode).toBe(200);
    const body = { adjustment_id: 'upgrade-1', customer_event_id: 'inv-1', type: 'restate', value: 49, currency: 'EUR' };
    const first = await adjust(who, body);
    expect(json(first)).toEqual({ status: 'accepted', adjustment_id: 'upgrade-1', events: 1 });
    // The same adjustment again (its time may differ: a retry sent later): the first answer.
    const again = await adjust(who, { ...body, occurred_at: new Date().toISOString() });
    expect(again.statusCode).toBe(200);
    expect(json(again)).toEqual(json(first));
    const stored = await rowsOf(who, 'adjustments');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...body, customer_event_id: 'inv-2' }, /another conversion \(customer_event_id\)/],
      [{ ...body, value: 59 }, /another value/],
      [{ ...body, currency: 'USD' }, /another currency/],
      [{ adjustment_id: 'upgrade-1', customer_event_id: 'inv-1', type: 'retract' }, /another type, another value, another currency/],
    ];
    for (const [reused, message] of cases) {
      const res = await adjust(who, reused);
      expect(res.statusCode, JSON.stringify(reused)).toBe(409);
      expect(errorOf(res)).toMatchObject({ type: 'conflict_error', code: 'adjustment_id_reused', param: 'adjustment_id', message: expect.stringMatching(message) });
    }
    expect(await rowsOf(who, 'adjustments')).toEqual(stored);
  });
});
