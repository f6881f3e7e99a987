import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './support';
import { DEMO } from '../../../src/demo/setup';
import { conversionPath, saasSignupPath } from '../../../src/protocol/webhook';
import { snapshotsPath } from '../../../src/protocol/collector';
import { newToken, snapshotBody } from '../support/fixtures';
import { checkOccurredAt } from '../../../src/server/webhook/conversion-input';
import { recordReports } from '../../../src/server/webhook/report';
import { purgeExpiredSnapshots } from '../../../src/server/collector/retention';

const ORIGIN = 'http://localhost:8788';
const DAY = 86_400_000;

describe('later stages of a customer (the conversion trigger)', () => {
  let r: RevenueService;
  let seq = 0;
  const id = (prefix: string) => `${prefix}_${++seq}`;
  const signup = (body: Record<string, unknown>) => r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), body);
  const stage = (body: Record<string, unknown>, key = 'paid') => r.post(conversionPath(r.setup.site.site_key, key), body);
  const beacon = async (token: string, clickIds: Record<string, string>) => {
    const now = new Date();
    const res = await r.svc.app.inject({
      method: 'POST', url: snapshotsPath(r.setup.site.site_key), headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8' },
      payload: JSON.stringify(snapshotBody({
        correlation_token: token, occurred_at: new Date(now.getTime() - 60_000).toISOString(), page_url: `${ORIGIN}/signup`,
        touch: { click_ids: clickIds, utm: {}, landing_page_url: `${ORIGIN}/`, referrer: null, captured_at: new Date(now.getTime() - 3_600_000).toISOString() },
      })),
    });
    expect(res.statusCode).toBe(204);
  };
  const eventsOf = async (customerEventId: string) =>
    (await r.api('GET', `/v1/events?site_id=${r.setup.site.id}&limit=100`)).data.filter((e: any) => e.customer_event_id === customerEventId);
  const clicks = { gclid: 'Cj0KCQ-stage-gclid', fbclid: 'IwAR-stage-fbclid', msclkid: 'a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d', li_fat_id: 'li-stage-fat-id' };

  beforeAll(async () => {
    r = await startRevenueService();
    const actions = (r.setup.flow.actions_config as Array<Record<string, unknown>>).map((a) =>
      a.integrationId === 'meta' ? { integrationId: 'meta', config: {} } : a,
    );
    const flow = await r.api('POST', '/v1/flows', {
      site_id: r.setup.site.id, name: 'Paid', trigger_config: { type: 'conversion', integrationId: 'api', key: 'paid' }, actions_config: actions,
    });
    expect((await r.api('POST', `/v1/flows/${flow.id}/publish`)).status).toBe('live');
  });
  afterAll(() => r.close());

  it("finds a stage's click through the signup of its customer_id and carries it, with the value, to all four", async () => {
    const token = newToken();
    await beacon(token, clicks);
    const signupId = id('signup');
    expect((await signup({ customer_event_id: signupId, correlation_token: token, customer_id: 'cus_A', email: 'ada@example.com' })).status).toBe(200);
    await r.drain();

    const paidId = id('paid');
    const res = await stage({ customer_event_id: paidId, customer_id: 'cus_A', value: 29, currency: 'EUR' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'promoted', promoted_count: 1, customer_event_id: paidId, correlated: true, match: 'identity' });
    await r.drain();

    const google = r.fakes.google.ingested().at(-1)!.event;
    expect(google).toMatchObject({ adIdentifiers: { gclid: clicks.gclid }, conversionValue: 29, currency: 'EUR' });
    const meta = r.fakes.meta.requests.at(-1)!;
    expect(meta.problems).toEqual([]);
    expect(meta.body.data[0]).toMatchObject({ event_name: 'Purchase', event_id: paidId, custom_data: { value: 29, currency: 'EUR' } });
    expect(meta.body.data[0].user_data.fbc).toMatch(new RegExp(`^fb\\.1\\.\\d+\\.${clicks.fbclid}$`));
    const microsoft = r.fakes.microsoft.applied.at(-1)!;
    expect(microsoft).toMatchObject({ microsoftClickId: clicks.msclkid, conversionValue: 29 });
    const linkedin = r.fakes.linkedin.events.at(-1)!;
    expect(linkedin.userIds).toContainEqual({ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: clicks.li_fat_id });
    expect(linkedin.conversionValue).toEqual({ currencyCode: 'EUR', amount: '29' });

    const [event] = await eventsOf(paidId);
    expect(event).toMatchObject({
      trigger_type: 'conversion', stage: 'paid', match: 'identity', signup_customer_event_id: signupId,
      value: 29, currency: 'EUR', customer_id: 'cus_A', match_quality: 'high', click_ids: clicks, status: 'completed',
    });
  });

  it('uses the correlation token when the stage has one, and says none when nothing links it to a click', async () => {
    const token = newToken();
    await beacon(token, { gclid: 'Cj0KCQ-own-token' });
    const byToken = await stage({ customer_event_id: id('trial'), customer_id: 'cus_B', correlation_token: token });
    expect(byToken.body.match).toBe('click');
    const unknown = await stage({ customer_event_id: id('trial'), customer_id: 'cus_nobody', email: 'x@example.com' });
    expect(unknown.body).toMatchObject({ match: 'none', correlated: false, promoted_count: 1 });
  });

  it('never takes the click of a signup received after the stage happened', async () => {
    const token = newToken();
    await beacon(token, clicks);
    expect((await signup({ customer_event_id: id('signup'), correlation_token: token, customer_id: 'cus_late', email: 'late@example.com' })).status).toBe(200);
    await r.drain();
    // Dated 89 days ago, before the signup (received now): that signup's click came after it.
    const old = await stage({ customer_event_id: id('paid'), customer_id: 'cus_late', value: 5, currency: 'EUR', occurred_at: new Date(Date.now() - 89 * DAY).toISOString() });
    expect(old.body).toMatchObject({ status: 'promoted', correlated: false, match: 'none' });
    // Within the 5 minutes of allowed clock skew of the signup: still that signup's.
    const now = await stage({ customer_event_id: id('paid'), customer_id: 'cus_late', value: 5, currency: 'EUR', occurred_at: new Date(Date.now() - 60_000).toISOString() });
    expect(now.body).toMatchObject({ status: 'promoted', correlated: true, match: 'identity' });
  });

  it('counts a repeated stage once and answers it the same', async () => {
    const body = { customer_event_id: id('renewal'), customer_id: 'cus_A', value: 29, currency: 'EUR' };
    const [a, b] = await Promise.all([stage(body), stage(body)]);
    expect(b.body).toEqual(a.body);
    expect(await eventsOf(body.customer_event_id)).toHaveLength(1);
  });

  it("refuses a stage that reuses a signup's customer_event_id with a 409 naming the signup, and stores nothing", async () => {
    const userId = id('user');
    expect((await signup({ customer_event_id: userId, correlation_token: null, allow_uncorrelated: true, customer_id: 'cus_R' })).status).toBe(200);
    const reused = await stage({ customer_event_id: userId, customer_id: 'cus_R', value: 49, currency: 'EUR' });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({ type: 'conflict_error', code: 'customer_event_id_reused', param: 'customer_event_id' });
    expect(reused.body.error.message).toMatch(new RegExp(`signup .*trigger '${DEMO.triggerKey}'`));
    expect(reused.body.error.message).not.toContain(userId);
    const rows = await r.svc.db.query<{ kind: string }>('select kind from reports where site_id = $1 and customer_event_id = $2', [r.setup.site.id, userId]);
    expect(rows).toEqual([{ kind: 'saas_signup' }]);
    expect((await eventsOf(userId)).map((e: any) => e.trigger_type)).toEqual(['saas_signup']);
    // The other way round: no retry either.
    const paidId = id('paid');
    const paid = await stage({ customer_event_id: paidId, customer_id: 'cus_R', value: 9, currency: 'EUR' });
    expect(paid.status).toBe(200);
    const asSignup = await signup({ customer_event_id: paidId, correlation_token: null, allow_uncorrelated: true });
    expect(asSignup.status).toBe(409);
    expect(asSignup.body.error.message).toMatch(/later stage .*trigger 'paid'/);
    // A repeat of the same kind is answered as the first time (DESIGN.md's dedupe), even with another value or trigger key.
    const retry = await stage({ customer_event_id: paidId, customer_id: 'cus_R', value: 99, currency: 'EUR' }, 'renewal');
    expect(retry).toEqual(paid);
    expect((await eventsOf(paidId)).map((e: any) => e.value)).toEqual([9]);
  });

  it('refuses the reuse within one batch of concurrent reports too: the first kind keeps the id', async () => {
    const sharedId = id('shared');
    const [a, b] = await Promise.all([
      signup({ customer_event_id: sharedId, correlation_token: null, allow_uncorrelated: true, customer_id: 'cus_S' }),
      stage({ customer_event_id: sharedId, customer_id: 'cus_S', value: 5, currency: 'EUR' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const rows = await r.svc.db.query('select kind from reports where site_id = $1 and customer_event_id = $2', [r.setup.site.id, sharedId]);
    expect(rows).toHaveLength(1);

    // In one batch of the writer: the first submission of the id holds it, a retry of it shares its answer.
    const [owner] = await r.svc.db.query<{ account_id: string }>('select account_id from sites where id = $1', [r.setup.site.id]);
    const site = { id: r.setup.site.id, account_id: owner!.account_id, site_key: r.setup.site.site_key };
    const report = (customerEventId: string) => ({ customer_event_id: customerEventId, correlation_token: null, identity: {}, allow_uncorrelated: true, customer_id: 'cus_S' });
    const batchId = id('batch');
    const now = new Date();
    const outcomes = await recordReports(r.svc.db, [
      { site, triggerKey: DEMO.triggerKey, report: report(batchId), now },
      { site, triggerKey: 'paid', report: report(batchId), now, kind: 'conversion' },
      { site, triggerKey: DEMO.triggerKey, report: report(batchId), now },
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    expect(!outcomes[1]!.ok && outcomes[1]!.error).toMatchObject({ status: 409, code: 'customer_event_id_reused' });
  });

  it("pairs a stage reported before its signup's snapshot arrived, within the pairing window", async () => {
    const token = newToken();
    expect((await signup({ customer_event_id: id('signup'), correlation_token: token, customer_id: 'cus_C' })).status).toBe(200);
    const paidId = id('paid');
    expect((await stage({ customer_event_id: paidId, customer_id: 'cus_C', value: 49.9, currency: 'EUR' })).body.match).toBe('identity');
    await beacon(token, { gclid: 'Cj0KCQ-late-snapshot' });
    await r.drain();
    const [event] = await eventsOf(paidId);
    expect(event).toMatchObject({ match_quality: 'high', click_ids: { gclid: 'Cj0KCQ-late-snapshot' } });
    expect(r.fakes.google.ingested().some((i) => i.event.adIdentifiers?.gclid === 'Cj0KCQ-late-snapshot' && i.event.conversionValue === 49.9)).toBe(true);
  });

  it('an erasure by customer_id removes it from reports and events, and a later stage of it then finds no click', async () => {
    const token = newToken();
    await beacon(token, { gclid: 'Cj0KCQ-erased-customer' });
    const signupId = id('signup');
    expect((await signup({ customer_event_id: signupId, correlation_token: token, customer_id: 'cus_erased' })).status).toBe(200);
    await r.drain();
    const erasure = await r.api('POST', '/v1/erasures', { customer_id: 'cus_erased' });
    expect(erasure.matched).toMatchObject({ reports: 1, snapshots: 1 });
    expect(erasure.matched.events).toBeGreaterThanOrEqual(1);
    const [event] = await eventsOf(signupId);
    expect(event).toMatchObject({ customer_id: null, click_ids: null });
    const later = await stage({ customer_event_id: id('paid'), customer_id: 'cus_erased', value: 29, currency: 'EUR' });
    expect(later.body).toMatchObject({ match: 'none', correlated: false });
  });

  it('keeps signup flows and stage flows of one key apart', async () => {
    const res = await signup({ customer_event_id: id('x'), correlation_token: null, allow_uncorrelated: true, customer_id: 'cus_D' });
    expect(res.body.promoted_count).toBe(1);
    const none = await stage({ customer_event_id: id('x'), customer_id: 'cus_D' }, DEMO.triggerKey);
    expect(none.body).toMatchObject({ status: 'no_matching_flow', promoted_count: 0 });
  });

  it.each([
    [{ customer_id: 'cus_A' }, 'customer_event_id'],
    [{ customer_event_id: 'e1' }, 'customer_id'],
    [{ customer_event_id: 'e1', customer_id: 'cus_A', occurred_at: 'yesterday' }, 'occurred_at'],
    [{ customer_event_id: 'e1', customer_id: 'cus_A', occurred_at: new Date(Date.now() - 91 * DAY).toISOString() }, 'occurred_at'],
    [{ customer_event_id: 'e1', customer_id: 'cus_A', occurred_at: new Date(Date.now() + DAY).toISOString() }, 'occurred_at'],
    [{ customer_event_id: 'e1', customer_id: 'cus_A', correlation_token: 'short' }, 'correlation_token'],
    [{ customer_event_id: 'e1', customer_id: 'cus_A', value: 5 }, 'currency'],
    [{ customer_event_id: 'e1', customer_id: 'cus_A', email: 7 }, 'email'],
  ])('refuses %j with a 400 naming %s', async (body, param) => {
    const res = await stage(body);
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it("carries the signup's click when the signup's snapshot is gone (retention: a payment weeks after the signup)", async () => {
    const token = newToken();
    const captured = Date.now() - 3_600_000;
    await beacon(token, clicks);
    const signupId = id('signup');
    expect((await signup({ customer_event_id: signupId, correlation_token: token, customer_id: 'cus_month', email: 'month@example.com' })).status).toBe(200);
    await r.drain();
    // The snapshot retention (30 days by default) runs 31 days on: the signup's snapshot is deleted, its event stays.
    expect(await purgeExpiredSnapshots(r.svc.db, 30, new Date(Date.now() + 31 * DAY))).toBeGreaterThan(0);
    expect(await r.svc.db.query('select 1 from snapshots where correlation_token = $1', [token])).toEqual([]);

    const paidId = id('paid');
    const res = await stage({ customer_event_id: paidId, customer_id: 'cus_month', value: 49, currency: 'EUR' });
    expect(res.body).toMatchObject({ status: 'promoted', correlated: true, match: 'identity' });
    await r.drain();
    const [event] = await eventsOf(paidId);
    expect(event).toMatchObject({ match: 'identity', match_quality: 'high', click_ids: clicks, status: 'completed', touch_captured_at: expect.any(String) });
    expect(r.fakes.google.ingested().at(-1)!.event).toMatchObject({ adIdentifiers: { gclid: clicks.gclid }, conversionValue: 49 });
    expect(r.fakes.microsoft.applied.at(-1)).toMatchObject({ microsoftClickId: clicks.msclkid, conversionValue: 49 });
    expect(r.fakes.linkedin.events.at(-1)!.userIds).toContainEqual({ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: clicks.li_fat_id });
    // fbc dated at the click (the touch's time the signup's event kept), not at the payment.
    const fbc = r.fakes.meta.requests.at(-1)!.body.data[0].user_data.fbc as string;
    expect(fbc).toMatch(new RegExp(`^fb\\.1\\.\\d+\\.${clicks.fbclid}$`));
    expect(Math.abs(Number(fbc.split('.')[2]) - captured)).toBeLessThan(60_000);
  });

  it('refuses a stage signed with another secret', async () => {
    const res = await r.post(conversionPath(r.setup.site.site_key, 'paid'), { customer_event_id: 'e2', customer_id: 'c' }, { secret: 'whsec_wrong_000000000000000000000000000' });
    expect(res.status).toBe(401);
  });
});

describe('the 90-day window of occurred_at (injected clock)', () => {
  const now = new Date('2026-11-21T12:00:00.000Z');
  it('takes 90 days back exactly and refuses a millisecond more, and the future beyond 5 minutes', () => {
    expect(checkOccurredAt(new Date(now.getTime() - 90 * DAY).toISOString(), now)).toEqual(new Date(now.getTime() - 90 * DAY));
    expect(() => checkOccurredAt(new Date(now.getTime() - 90 * DAY - 1).toISOString(), now)).toThrow(/90 days/);
    expect(checkOccurredAt(new Date(now.getTime() + 60_000).toISOString(), now)).toBeInstanceOf(Date);
    expect(() => checkOccurredAt(new Date(now.getTime() + 10 * 60_000).toISOString(), now)).toThrow(/future/);
    expect(checkOccurredAt(undefined, now)).toBeNull();
    expect(() => checkOccurredAt('2026-02-31T00:00:00Z', now)).toThrow(/ISO 8601/);
  });
});
