/** cnv/client's reportSignup with value, reportConversion and adjustConversion, against the real service. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './support';
import { DEMO } from '../../../src/demo/setup';
import { createCnvClient, type CnvClient } from '../../../src/client';

describe('the client: value, later stages, adjustments', () => {
  let r: RevenueService;
  let client: CnvClient;
  beforeAll(async () => {
    r = await startRevenueService();
    const base = `http://127.0.0.1:${(r.svc.app.server.address() as { port: number }).port}`;
    client = createCnvClient({ webhookBaseUrl: base, siteKey: r.setup.site.site_key, triggerKey: DEMO.triggerKey, secret: r.setup.webhookSecret });
    const actions = r.setup.flow.actions_config;
    const flow = await r.api('POST', '/v1/flows', { site_id: r.setup.site.id, name: 'Paid', trigger_config: { type: 'conversion', integrationId: 'api', key: 'paid' }, actions_config: actions });
    await r.api('POST', `/v1/flows/${flow.id}/publish`);
  });
  afterAll(() => r.close());

  it('reports a signup with its value and customer id, a stage by customer id, then restates and retracts it', async () => {
    const signup = await client.reportSignup({ customerEventId: 'c-signup-1', allowUncorrelated: true, email: 'ada@example.com', value: 0, currency: 'EUR', customerId: 'acct_9' });
    expect(signup).toMatchObject({ ok: true, response: { status: 'promoted', promoted_count: 1 } });
    const stage = await client.reportConversion('paid', { customerEventId: 'c-paid-1', customerId: 'acct_9', value: 29, currency: 'EUR', occurredAt: new Date() });
    expect(stage).toMatchObject({ ok: true, response: { status: 'promoted', match: 'none' } });
    const again = await client.reportConversion('paid', { customerEventId: 'c-paid-1', customerId: 'acct_9', value: 29, currency: 'EUR' });
    expect(again.ok && again.response).toEqual(stage.ok && stage.response);
    const restate = await client.adjustConversion({ adjustmentId: 'c-adj-1', customerEventId: 'c-paid-1', type: 'restate', value: 19, currency: 'EUR' });
    expect(restate).toMatchObject({ ok: true, response: { status: 'accepted', adjustment_id: 'c-adj-1', events: 1 } });
    // An adjustment takes no correlation token: none is said to be missing.
    expect(restate).toMatchObject({ correlationToken: null, tokenProblem: null });
    const retract = await client.adjustConversion({ adjustmentId: 'c-adj-2', customerEventId: 'c-paid-1', type: 'retract' });
    expect(retract.ok).toBe(true);
    const unknown = await client.adjustConversion({ adjustmentId: 'c-adj-3', customerEventId: 'nope', type: 'retract' });
    expect(unknown).toMatchObject({ ok: false, sent: true, reason: 'rejected', httpStatus: 404, error: { code: 'resource_missing', param: 'customer_event_id' } });
    // The service's own message, not the hint at a wrong address.
    expect(!unknown.ok && unknown.message).toMatch(/resource_missing: No conversion was reported with customer_event_id 'nope'/);
    expect(!unknown.ok && unknown.message).not.toMatch(/siteKey|webhookBaseUrl/);
  });

  it('sends a value from float arithmetic rounded and a currency in small letters upper-cased', async () => {
    const result = await client.reportSignup({ customerEventId: 'c-float-1', allowUncorrelated: true, email: 'flo@example.com', value: 29.9 * 1.19, currency: 'eur' });
    expect(result).toMatchObject({ ok: true, response: { status: 'promoted' } });
    const restate = await client.adjustConversion({ adjustmentId: 'c-float-adj', customerEventId: 'c-float-1', type: 'restate', value: 100 * 1.1, currency: 'usd' });
    expect(restate).toMatchObject({ ok: true, response: { status: 'accepted' } });
    const events = await r.api('GET', `/v1/events?site_id=${r.setup.site.id}`);
    const event = events.data.find((e: any) => e.customer_event_id === 'c-float-1');
    expect(event).toMatchObject({ value: 35.581, currency: 'EUR' });
    expect(event.adjustments[0]).toMatchObject({ value: 110, currency: 'USD' });
  });

  it("treats a reused customer_event_id (409) as final: no retry, the service's reason surfaced", async () => {
    expect((await client.reportSignup({ customerEventId: 'c-user-7', allowUncorrelated: true, customerId: 'acct_7' })).ok).toBe(true);
    const reused = await client.reportConversion('paid', { customerEventId: 'c-user-7', customerId: 'acct_7', value: 49, currency: 'EUR' });
    expect(reused).toMatchObject({ ok: false, sent: true, reason: 'rejected', httpStatus: 409, attempts: 1, error: { code: 'customer_event_id_reused', param: 'customer_event_id' } });
    expect(!reused.ok && reused.message).toMatch(/customer_event_id_reused: This customer_event_id was already used on this site for a signup/);
  });

  it('applies an adjustment once when the answer to its first attempt is lost and the client sends it again', async () => {
    const base = `http://127.0.0.1:${(r.svc.app.server.address() as { port: number }).port}`;
    let calls = 0;
    // The first attempt reaches the service and is recorded, but its answer never comes back (a reset connection).
    const losesFirstAnswer: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      if (++calls === 1) {
        await response.text();
        throw new TypeError('fetch failed');
      }
      return response;
    };
    const flaky = createCnvClient({
      webhookBaseUrl: base, siteKey: r.setup.site.site_key, triggerKey: DEMO.triggerKey, secret: r.setup.webhookSecret,
      fetch: losesFirstAnswer, sleep: async () => undefined, random: () => 0,
    });
    expect((await client.reportSignup({ customerEventId: 'c-lost-1', allowUncorrelated: true, email: 'lost@example.com', value: 40, currency: 'EUR' })).ok).toBe(true);
    await r.drain();
    const microsoft = r.fakes.microsoft.adjustments.length;
    const restate = await flaky.adjustConversion({ adjustmentId: 'c-lost-adj', customerEventId: 'c-lost-1', type: 'restate', value: 25, currency: 'EUR' });
    expect(restate).toMatchObject({ ok: true, attempts: 2, response: { status: 'accepted', adjustment_id: 'c-lost-adj', events: 1 } });
    await r.drain();
    expect(r.fakes.microsoft.adjustments.length - microsoft).toBe(1);
    const event = (await r.api('GET', `/v1/events?site_id=${r.setup.site.id}`)).data.find((e: any) => e.customer_event_id === 'c-lost-1');
    expect(event.adjustments).toHaveLength(1);
    expect(event).toMatchObject({ value: 40, current_value: 25 });

    // Every attempt lost: the message names the id the service dedupes an adjustment on.
    const down = createCnvClient({
      webhookBaseUrl: base, siteKey: r.setup.site.site_key, triggerKey: DEMO.triggerKey, secret: r.setup.webhookSecret,
      fetch: async () => { throw new TypeError('fetch failed'); }, sleep: async () => undefined, maxAttempts: 2,
    });
    const gaveUp = await down.adjustConversion({ adjustmentId: 'c-down-adj', customerEventId: 'c-lost-1', type: 'retract' });
    expect(gaveUp).toMatchObject({ ok: false, reason: 'gave_up', attempts: 2 });
    expect(!gaveUp.ok && gaveUp.message).toMatch(/Safe to send again later with the same adjustmentId: the service dedupes on it\.$/);
    const report = await down.reportConversion('paid', { customerEventId: 'c-down-paid', customerId: 'acct_9' });
    expect(!report.ok && report.message).toMatch(/same customerEventId: the service dedupes on it\.$/);
  });

  it('checks the input before sending anything', async () => {
    expect(await client.reportSignup({ customerEventId: 'x', allowUncorrelated: true, value: 1.1234567, currency: 'EUR' })).toMatchObject({ ok: false, sent: false, param: 'value' });
    expect(await client.reportSignup({ customerEventId: 'x', allowUncorrelated: true, value: 1.2345678, currency: 'EUR' })).toMatchObject({ ok: false, sent: false, param: 'value' });
    expect(await client.reportSignup({ customerEventId: 'x', allowUncorrelated: true, value: 5, currency: 'eu' })).toMatchObject({ ok: false, sent: false, param: 'currency' });
    expect(await client.reportSignup({ customerEventId: 'x', allowUncorrelated: true, value: 5 })).toMatchObject({ ok: false, sent: false, param: 'currency' });
    // Three capital letters that name no currency: refused before sending, as the service would refuse it.
    expect(await client.reportSignup({ customerEventId: 'x', allowUncorrelated: true, value: 5, currency: 'ZZZ' })).toMatchObject({ ok: false, sent: false, param: 'currency' });
    expect(await client.reportConversion('paid', { customerEventId: 'x', customerId: '' })).toMatchObject({ ok: false, sent: false, param: 'customerId' });
    expect(await client.reportConversion('bad key!', { customerEventId: 'x', customerId: 'c' })).toMatchObject({ ok: false, sent: false, param: 'stageKey' });
    expect(await client.adjustConversion({ adjustmentId: 'a', customerEventId: 'x', type: 'restate' })).toMatchObject({ ok: false, sent: false, param: 'value' });
  });
});
