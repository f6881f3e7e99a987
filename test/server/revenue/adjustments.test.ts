import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './support';
import { DEMO } from '../../../src/demo/setup';
import { adjustmentPath, saasSignupPath } from '../../../src/protocol/webhook';
import { snapshotsPath } from '../../../src/protocol/collector';
import { newToken, snapshotBody } from '../support/fixtures';

const ORIGIN = 'http://localhost:8788';
/** The results of the four platforms these tests check (the demo may connect more). */
const four = (results: any[]) => results.filter((x) => ['google-ads', 'meta', 'microsoft-ads', 'linkedin'].includes(x.destination));

describe('adjustments: restate and retract a reported conversion', () => {
  let r: RevenueService;
  let seq = 0;
  const id = (prefix: string) => `${prefix}_${++seq}`;
  const signup = (body: Record<string, unknown>) => r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), body);
  const adjust = (body: Record<string, unknown>) => r.post(adjustmentPath(r.setup.site.site_key), body);
  const eventOf = async (customerEventId: string) =>
    (await r.api('GET', `/v1/events?site_id=${r.setup.site.id}&limit=100`)).data.find((e: any) => e.customer_event_id === customerEventId);
  const paidSignup = async (value = 29) => {
    const token = newToken();
    const now = Date.now();
    const res = await r.svc.app.inject({
      method: 'POST', url: snapshotsPath(r.setup.site.site_key), headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8' },
      payload: JSON.stringify(snapshotBody({
        correlation_token: token, occurred_at: new Date(now - 120_000).toISOString(), page_url: `${ORIGIN}/signup`,
        touch: {
          click_ids: { gclid: `Cj0KCQ-adj-${seq}`, msclkid: 'f'.repeat(31) + String(seq % 10), fbclid: 'IwAR-adj', li_fat_id: 'li-adj' },
          utm: {}, landing_page_url: `${ORIGIN}/`, referrer: null, captured_at: new Date(now - 3_600_000).toISOString(),
        },
      })),
    });
    expect(res.statusCode).toBe(204);
    const customerEventId = id('order');
    expect((await signup({ customer_event_id: customerEventId, correlation_token: token, email: 'ada@example.com', value, currency: 'EUR', customer_id: 'cus_adj' })).status).toBe(200);
    return customerEventId;
  };

  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  it('restates on Google (same transactionId, new value) and Microsoft (Restate); Meta and LinkedIn say unsupported', async () => {
    const order = await paidSignup();
    await r.drain();
    const original = r.fakes.google.ingested().at(-1)!.event;
    const adjustmentId = id('adj');
    const res = await adjust({ adjustment_id: adjustmentId, customer_event_id: order, type: 'restate', value: 19, currency: 'EUR' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'accepted', adjustment_id: adjustmentId, events: 1 });
    await r.drain();

    const restated = r.fakes.google.adjusted().at(-1)!.event;
    expect(restated).toMatchObject({ transactionId: original.transactionId, conversionValue: 19, currency: 'EUR', adIdentifiers: original.adIdentifiers });
    expect(r.fakes.microsoft.adjustments.at(-1)).toMatchObject({ adjustmentType: 'Restate', adjustmentValue: 19, adjustmentCurrencyCode: 'EUR' });
    const microsoftRequest = r.fakes.microsoft.requests.filter((q) => q.path.endsWith('/OfflineConversionAdjustments/Apply')).at(-1)!;
    expect(microsoftRequest.problems).toEqual([]);

    const event = await eventOf(order);
    expect(event.adjustments).toHaveLength(1);
    expect(event.adjustments[0]).toMatchObject({ adjustment_id: adjustmentId, type: 'restate', value: 19, currency: 'EUR' });
    // The reported value stays; current_value says what it is worth now.
    expect(event).toMatchObject({ value: 29, currency: 'EUR', current_value: 19, current_currency: 'EUR' });
    expect(four(event.adjustments[0].results)).toEqual([
      { destination: 'google-ads', status: 'adjusted', reason: null },
      // Each says why, then what to do instead: the platform keeps what it got; cnv keeps the corrected value.
      { destination: 'meta', status: 'unsupported', reason: expect.stringMatching(/^Meta's Conversions API .* Meta keeps the conversion as it was sent: use the corrected value cnv keeps \(the event's current_value, the dashboard's Value\) in your own reports\. An adjustment that arrives before a conversion is first sent is applied to that send/) },
      { destination: 'microsoft-ads', status: 'adjusted', reason: null },
      { destination: 'linkedin', status: 'unsupported', reason: expect.stringMatching(/^LinkedIn's Conversions API .* LinkedIn keeps the conversion as it was sent: use the corrected value cnv keeps \(the event's current_value, the dashboard's Value\) in your own reports\. An adjustment that arrives before a conversion is first sent is applied to that send/) },
    ]);
  });

  it('retracts on Microsoft (Retract); the Data Manager API has no retraction and says so', async () => {
    const order = await paidSignup();
    await r.drain();
    expect((await adjust({ adjustment_id: id('refund'), customer_event_id: order, type: 'retract' })).status).toBe(200);
    await r.drain();
    expect(r.fakes.microsoft.adjustments.at(-1)).toMatchObject({ adjustmentType: 'Retract', adjustmentValue: null });
    expect(await eventOf(order)).toMatchObject({ value: 29, current_value: 0, current_currency: 'EUR' });
    const [adjustment] = (await eventOf(order)).adjustments;
    expect(four(adjustment.results).map((x: any) => [x.destination, x.status])).toEqual([
      ['google-ads', 'unsupported'], ['meta', 'unsupported'], ['microsoft-ads', 'adjusted'], ['linkedin', 'unsupported'],
    ]);
    expect(adjustment.results[0].reason).toMatch(/Data Manager API/);
  });

  it('sends a conversion restated before it first went out at its restated value, on every platform, and settles the restatement with it', async () => {
    const order = await paidSignup(29);
    const restate = id('adj');
    expect((await adjust({ adjustment_id: restate, customer_event_id: order, type: 'restate', value: 15, currency: 'USD' })).status).toBe(200);
    const queued = await eventOf(order);
    expect(queued.status).toBe('queued');
    expect(four(queued.adjustments[0].results).map((x: any) => x.status)).toEqual(['queued', 'queued', 'queued', 'queued']);
    const before = { google: r.fakes.google.adjusted().length, microsoft: r.fakes.microsoft.adjustments.length };
    await r.drain();
    // The first send carries the conversion as it stands: Meta, LinkedIn, Reddit and TikTok have no adjustment operation.
    expect(r.fakes.google.ingested().at(-1)!.event).toMatchObject({ conversionValue: 15, currency: 'USD' });
    expect(r.fakes.meta.requests.at(-1)!.body.data[0].custom_data).toMatchObject({ value: 15, currency: 'USD' });
    expect(r.fakes.linkedin.events.at(-1)!.conversionValue).toEqual({ currencyCode: 'USD', amount: '15' });
    expect(r.fakes.reddit.requests.at(-1)!.body.data.events[0].metadata).toMatchObject({ value: 15, currency: 'USD' });
    expect(r.fakes.tiktok.requests.at(-1)!.body.data[0].properties).toMatchObject({ value: 15, currency: 'USD' });
    // Nothing more is sent for it: no adjustment call.
    expect(r.fakes.google.adjusted().length).toBe(before.google);
    expect(r.fakes.microsoft.adjustments.length).toBe(before.microsoft);
    const done = await eventOf(order);
    expect(done.status).toBe('completed');
    for (const result of done.adjustments[0].results) {
      expect(result).toMatchObject({ status: 'adjusted', reason: expect.stringMatching(/Applied before the conversion was first sent/) });
    }
  });

  it('never sends a conversion retracted before it first went out; its adjustments say so', async () => {
    const order = await paidSignup();
    expect((await adjust({ adjustment_id: id('adj'), customer_event_id: order, type: 'restate', value: 25, currency: 'EUR' })).status).toBe(200);
    expect((await adjust({ adjustment_id: id('refund'), customer_event_id: order, type: 'retract' })).status).toBe(200);
    const sent = { meta: r.fakes.meta.requests.length, microsoft: r.fakes.microsoft.requests.length, google: r.fakes.google.ingested().length };
    await r.drain();
    expect(r.fakes.meta.requests.length).toBe(sent.meta);
    expect(r.fakes.microsoft.requests.length).toBe(sent.microsoft);
    expect(r.fakes.google.ingested().length).toBe(sent.google);
    const done = await r.api('GET', `/v1/events/${(await eventOf(order)).id}`);
    expect(done.status).toBe('completed');
    expect(done.actions.length).toBeGreaterThan(0);
    for (const action of done.actions) {
      expect(action).toMatchObject({ status: 'skipped', error: { code: 'retracted' } });
    }
    expect(done.adjustments.map((a: any) => a.type)).toEqual(['restate', 'retract']);
    for (const adjustment of done.adjustments) {
      for (const result of adjustment.results) expect(result).toMatchObject({ status: 'adjusted', reason: expect.stringMatching(/retracted before it was sent/) });
    }
    // A chargeback after the refund, once the conversion was skipped as retracted: taken back already, nothing failed.
    expect((await adjust({ adjustment_id: id('chargeback'), customer_event_id: order, type: 'retract' })).status).toBe(200);
    await r.drain();
    const [, , chargeback] = (await r.api('GET', `/v1/events/${done.id}`)).adjustments;
    for (const result of chargeback.results) expect(result).toMatchObject({ status: 'adjusted', reason: expect.stringMatching(/retracted before it was sent/) });
    expect(r.fakes.microsoft.requests.length).toBe(sent.microsoft);
  });

  it('keeps a retraction final: a restatement after it is a 409 that records nothing, before and after the first send', async () => {
    // Refund, then a plan change delivered late (billing webhooks come in any order), before the conversion went out.
    const order = await paidSignup(50);
    expect((await adjust({ adjustment_id: id('refund'), customer_event_id: order, type: 'retract' })).status).toBe(200);
    const late = await adjust({ adjustment_id: id('upgrade'), customer_event_id: order, type: 'restate', value: 30, currency: 'EUR' });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ type: 'conflict_error', code: 'conversion_retracted', param: 'customer_event_id' });
    expect(late.body.error.message).toMatch(/retracted .*final.*nothing was recorded.*new conversion/);
    // A restatement stored after the retraction before the webhook refused it (older data; the retraction hidden for the
    // insert) does not bring the conversion back either.
    const [refund] = await r.svc.db.query<{ id: string }>(`select j.id from adjustments j join reports p on p.id = j.report_id where p.customer_event_id = $1`, [order]);
    await r.svc.db.query(`update adjustments set type = 'restate', value = 1, currency = 'EUR' where id = $1`, [refund!.id]);
    const older = await adjust({ adjustment_id: id('older'), customer_event_id: order, type: 'restate', value: 30, currency: 'EUR' });
    await r.svc.db.query(`update adjustments set type = 'retract', value = null, currency = null where id = $1`, [refund!.id]);
    expect(older.status).toBe(200);
    const sent = { meta: r.fakes.meta.requests.length, google: r.fakes.google.ingested().length, microsoft: r.fakes.microsoft.requests.length };
    await r.drain();
    // Never sent: not at 30, not at all.
    expect(r.fakes.meta.requests.length).toBe(sent.meta);
    expect(r.fakes.google.ingested().length).toBe(sent.google);
    expect(r.fakes.microsoft.requests.length).toBe(sent.microsoft);
    const unsent = await eventOf(order);
    expect(unsent).toMatchObject({ value: 50, current_value: 0, current_currency: 'EUR' });
    expect(unsent.adjustments.map((a: any) => a.type)).toEqual(['retract', 'restate']);
    for (const action of unsent.actions) expect(action).toMatchObject({ status: 'skipped', error: { code: 'retracted' } });

    // Restate 50, restate 30, retract, then a restatement that arrives late: the conversion ends retracted everywhere.
    const delivered = await paidSignup(40);
    await r.drain();
    for (const [type, value] of [['restate', 50], ['restate', 30], ['retract', null]] as const) {
      expect((await adjust({ adjustment_id: id('adj'), customer_event_id: delivered, type, ...(value === null ? {} : { value, currency: 'EUR' }) })).status).toBe(200);
    }
    await r.drain();
    const microsoftAdjustments = r.fakes.microsoft.adjustments.length;
    expect(r.fakes.microsoft.adjustments.at(-1)).toMatchObject({ adjustmentType: 'Retract' });
    expect((await adjust({ adjustment_id: id('adj'), customer_event_id: delivered, type: 'restate', value: 45, currency: 'EUR' })).status).toBe(409);
    await r.drain();
    expect(r.fakes.microsoft.adjustments.length).toBe(microsoftAdjustments);
    const done = await eventOf(delivered);
    expect(done).toMatchObject({ value: 40, current_value: 0, current_currency: 'EUR' });
    expect(done.adjustments.map((a: any) => [a.type, a.value])).toEqual([['restate', 50], ['restate', 30], ['retract', null]]);
    // A second retraction (a chargeback after the refund) is still taken.
    expect((await adjust({ adjustment_id: id('chargeback'), customer_event_id: delivered, type: 'retract' })).status).toBe(200);
  });

  describe('restatements that arrive out of order (payment systems do not guarantee the order of their events)', () => {
    // The downgrade to 29 happened after the upgrade to 49, but its event arrived first.
    const at = (msBefore: number) => new Date(Date.now() - msBefore).toISOString();
    const superseded = (result: any) =>
      expect(result).toMatchObject({ status: 'adjusted', reason: expect.stringMatching(/^Not sent: superseded\. A restatement of this conversion dated later \(.+\) was recorded before this one arrived/) });

    it('records a restatement dated before one already recorded but never sends it: the platforms and current_value stay at the later one', async () => {
      const order = await paidSignup(39);
      await r.drain();
      const before = { google: r.fakes.google.adjusted().length, microsoft: r.fakes.microsoft.adjustments.length };
      const downgrade = id('down');
      const upgrade = id('up');
      expect((await adjust({ adjustment_id: downgrade, customer_event_id: order, type: 'restate', value: 29, currency: 'EUR', occurred_at: at(10_000) })).status).toBe(200);
      const late = { adjustment_id: upgrade, customer_event_id: order, type: 'restate', value: 49, currency: 'EUR', occurred_at: at(20_000) };
      const answer = await adjust(late);
      expect(answer).toEqual({ status: 200, body: { status: 'accepted', adjustment_id: upgrade, events: 1 } });
      // Deduped as any adjustment: a retry is answered as the first and records nothing more.
      expect((await adjust(late)).body).toEqual(answer.body);
      await r.drain();
      expect(r.fakes.google.adjusted().length - before.google).toBe(1);
      expect(r.fakes.google.adjusted().at(-1)!.event).toMatchObject({ conversionValue: 29, currency: 'EUR' });
      expect(r.fakes.microsoft.adjustments.length - before.microsoft).toBe(1);
      expect(r.fakes.microsoft.adjustments.at(-1)).toMatchObject({ adjustmentType: 'Restate', adjustmentValue: 29 });
      const event = await eventOf(order);
      expect(event).toMatchObject({ value: 39, current_value: 29, current_currency: 'EUR' });
      expect(event.adjustments.map((a: any) => [a.adjustment_id, a.value])).toEqual([[downgrade, 29], [upgrade, 49]]);
      expect(four(event.adjustments[0].results).map((x: any) => x.status)).toEqual(['adjusted', 'unsupported', 'adjusted', 'unsupported']);
      for (const result of event.adjustments[1].results) superseded(result);

      // A later-dated one still goes out after it, and one dated alike goes out too: of those, the last to arrive wins.
      expect((await adjust({ adjustment_id: id('up'), customer_event_id: order, type: 'restate', value: 35, currency: 'EUR', occurred_at: at(5_000) })).status).toBe(200);
      expect((await adjust({ adjustment_id: id('fix'), customer_event_id: order, type: 'restate', value: 36, currency: 'EUR', occurred_at: at(5_000) })).status).toBe(200);
      const microsoft = r.fakes.microsoft.adjustments.length;
      await r.drain();
      expect(r.fakes.microsoft.adjustments.slice(microsoft).map((x: any) => x.adjustmentValue)).toEqual([35, 36]);
      // Each is dated after the one sent before it (the superseded one is no step of that chain).
      const times = r.fakes.microsoft.adjustments.slice(microsoft - 1).map((x: any) => Date.parse(x.adjustmentTime));
      expect(times[1]).toBeGreaterThan(times[0]!);
      expect(times[2]).toBeGreaterThan(times[1]!);
      expect(await eventOf(order)).toMatchObject({ current_value: 36 });
    });

    it('sends a conversion not yet sent at its latest-dated restatement, on every platform', async () => {
      const order = await paidSignup(39);
      expect((await adjust({ adjustment_id: id('down'), customer_event_id: order, type: 'restate', value: 29, currency: 'EUR', occurred_at: at(10_000) })).status).toBe(200);
      expect((await adjust({ adjustment_id: id('up'), customer_event_id: order, type: 'restate', value: 49, currency: 'EUR', occurred_at: at(20_000) })).status).toBe(200);
      const before = { google: r.fakes.google.adjusted().length, microsoft: r.fakes.microsoft.adjustments.length };
      await r.drain();
      expect(r.fakes.google.ingested().at(-1)!.event).toMatchObject({ conversionValue: 29, currency: 'EUR' });
      expect(r.fakes.meta.requests.at(-1)!.body.data[0].custom_data).toMatchObject({ value: 29, currency: 'EUR' });
      expect(r.fakes.linkedin.events.at(-1)!.conversionValue).toEqual({ currencyCode: 'EUR', amount: '29' });
      expect(r.fakes.google.adjusted().length).toBe(before.google);
      expect(r.fakes.microsoft.adjustments.length).toBe(before.microsoft);
      const event = await eventOf(order);
      expect(event).toMatchObject({ status: 'completed', current_value: 29 });
      for (const result of event.adjustments[0].results) expect(result).toMatchObject({ status: 'adjusted', reason: expect.stringMatching(/Applied before the conversion was first sent/) });
      for (const result of event.adjustments[1].results) superseded(result);
    });

    it('ends at the latest-dated restatement when two arrive at once, whichever commits first', async () => {
      for (const first of ['down', 'up'] as const) {
        const order = await paidSignup(39);
        await r.drain();
        const down = { adjustment_id: id('down'), customer_event_id: order, type: 'restate', value: 29, currency: 'EUR', occurred_at: at(10_000) };
        const up = { adjustment_id: id('up'), customer_event_id: order, type: 'restate', value: 49, currency: 'EUR', occurred_at: at(20_000) };
        const microsoft = r.fakes.microsoft.adjustments.length;
        const answers = await Promise.all(first === 'down' ? [adjust(down), adjust(up)] : [adjust(up), adjust(down)]);
        expect(answers.map((a) => a.status)).toEqual([200, 200]);
        await r.drain();
        expect(r.fakes.microsoft.adjustments.at(-1)).toMatchObject({ adjustmentValue: 29 });
        expect(r.fakes.microsoft.adjustments.length - microsoft).toBeGreaterThanOrEqual(1);
        expect(await eventOf(order)).toMatchObject({ current_value: 29 });
      }
    });

    it('keeps a retraction final whatever its date: dated before a restatement already recorded, it still applies', async () => {
      const order = await paidSignup(39);
      await r.drain();
      expect((await adjust({ adjustment_id: id('down'), customer_event_id: order, type: 'restate', value: 29, currency: 'EUR', occurred_at: at(10_000) })).status).toBe(200);
      expect((await adjust({ adjustment_id: id('refund'), customer_event_id: order, type: 'retract', occurred_at: at(20_000) })).status).toBe(200);
      await r.drain();
      expect(r.fakes.microsoft.adjustments.at(-1)).toMatchObject({ adjustmentType: 'Retract' });
      const event = await eventOf(order);
      expect(event).toMatchObject({ current_value: 0 });
      expect(four(event.adjustments[1].results).map((x: any) => x.status)).toEqual(['unsupported', 'unsupported', 'adjusted', 'unsupported']);
      // A restatement after it is refused, dated before or after it.
      for (const msBefore of [30_000, 1_000]) {
        const late = await adjust({ adjustment_id: id('late'), customer_event_id: order, type: 'restate', value: 49, currency: 'EUR', occurred_at: at(msBefore) });
        expect(late.status).toBe(409);
        expect(late.body.error.code).toBe('conversion_retracted');
      }
    });
  });

  it('sends a failed conversion again at its restated value when it is redelivered, and settles the adjustment that had failed', async () => {
    const order = await paidSignup(40);
    r.fakes.meta.respondWith('invalid_parameter');
    await r.drain();
    const event = await eventOf(order);
    expect(event.status).toBe('failed');
    expect((await adjust({ adjustment_id: id('adj'), customer_event_id: order, type: 'restate', value: 55, currency: 'EUR' })).status).toBe(200);
    await r.drain();
    const metaResult = () => eventOf(order).then((e: any) => e.adjustments[0].results.find((x: any) => x.destination === 'meta'));
    expect(await metaResult()).toMatchObject({ status: 'failed', reason: expect.stringMatching(/never reached Meta/) });
    await r.api('POST', `/v1/events/${event.id}/redeliver`, {});
    await r.drain();
    expect(r.fakes.meta.requests.at(-1)!.body.data[0].custom_data).toMatchObject({ value: 55, currency: 'EUR' });
    expect(await metaResult()).toMatchObject({ status: 'adjusted', reason: expect.stringMatching(/Applied before the conversion was first sent/) });
  });

  it('applies the same adjustment sent 20 times at once exactly once', async () => {
    const order = await paidSignup();
    await r.drain();
    const body = { adjustment_id: id('adj'), customer_event_id: order, type: 'restate', value: 9.5, currency: 'EUR' };
    const before = r.fakes.microsoft.adjustments.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => adjust(body)));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    for (const a of answers) expect(a.body).toEqual({ status: 'accepted', adjustment_id: body.adjustment_id, events: 1 });
    await r.drain();
    expect(r.fakes.microsoft.adjustments.length - before).toBe(1);
    const rows = await r.svc.db.query<{ n: number }>('select count(*)::int as n from adjustments where adjustment_id = $1', [body.adjustment_id]);
    expect(rows[0]!.n).toBe(1);
  });

  it('says so when the conversion itself failed', async () => {
    const order = id('lost');
    expect((await signup({ customer_event_id: order, correlation_token: null, allow_uncorrelated: true })).status).toBe(200);
    await r.drain();
    expect((await adjust({ adjustment_id: id('adj'), customer_event_id: order, type: 'retract' })).status).toBe(200);
    await r.drain();
    const [adjustment] = (await eventOf(order)).adjustments;
    for (const result of adjustment.results) {
      expect(result.status).toBe('failed');
      expect(result.reason).toMatch(/never reached|never delivered/);
    }
  });

  it("says unsupported, with the consent reason, where the visitor's consent held the conversion back; never failed", async () => {
    // revenue.md: "An adjustment the visitor's consent holds back is `unsupported` with the consent reason and its hint";
    // the conversion's own actions are `skipped`, which never makes anything failed (delivery.md).
    const token = newToken();
    const now = Date.now();
    const snapshot = await r.svc.app.inject({
      method: 'POST', url: snapshotsPath(r.setup.site.site_key), headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8' },
      payload: JSON.stringify(snapshotBody({
        correlation_token: token, occurred_at: new Date(now - 120_000).toISOString(), page_url: `${ORIGIN}/signup`,
        consent: { ad_user_data: 'denied', ad_personalization: 'denied' },
        touch: {
          click_ids: { gclid: `Cj0KCQ-consent-${seq}`, msclkid: 'c'.repeat(32), fbclid: 'IwAR-consent', li_fat_id: 'li-consent' },
          utm: {}, landing_page_url: `${ORIGIN}/`, referrer: null, captured_at: new Date(now - 3_600_000).toISOString(),
        },
      })),
    });
    expect(snapshot.statusCode).toBe(204);
    const order = id('denied');
    expect((await signup({ customer_event_id: order, correlation_token: token, email: 'ada@example.com', value: 30, currency: 'EUR' })).status).toBe(200);
    await r.drain();
    const sent = await eventOf(order);
    expect(sent.status).toBe('completed');
    expect(sent.actions.find((a: any) => a.destination === 'microsoft-ads')).toMatchObject({ status: 'skipped', error: { code: 'consent_denied' } });
    const microsoftAdjustments = r.fakes.microsoft.adjustments.length;

    expect((await adjust({ adjustment_id: id('refund'), customer_event_id: order, type: 'retract' })).status).toBe(200);
    await r.drain();
    const results = four((await eventOf(order)).adjustments[0].results);
    // Google got the click without identifiers (consent: adUserData DENIED), so its adjustment goes out as the original did.
    expect(results.find((x: any) => x.destination === 'google-ads').status).toBe('unsupported'); // the Data Manager API has no retraction
    for (const destination of ['meta', 'microsoft-ads', 'linkedin']) {
      expect(results.find((x: any) => x.destination === destination)).toMatchObject({
        status: 'unsupported',
        reason: expect.stringMatching(/^The visitor denied ad_user_data consent on the page, so cnv sent nothing to .*Nothing to fix: this is the visitor’s choice\.$/),
      });
    }
    expect(r.fakes.microsoft.adjustments.length).toBe(microsoftAdjustments);
  });

  it('answers 404 for an unknown customer_event_id and 400 naming the field for a bad body', async () => {
    const missing = await adjust({ adjustment_id: id('adj'), customer_event_id: 'no-such-order', type: 'retract' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.param).toBe('customer_event_id');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ customer_event_id: 'x', type: 'retract' }, 'adjustment_id'],
      [{ adjustment_id: 'a', customer_event_id: 'x', type: 'cancel' }, 'type'],
      [{ adjustment_id: 'a', customer_event_id: 'x', type: 'restate' }, 'value'],
      [{ adjustment_id: 'a', customer_event_id: 'x', type: 'restate', value: 5 }, 'currency'],
      [{ adjustment_id: 'a', customer_event_id: 'x', type: 'retract', value: 5, currency: 'EUR' }, 'value'],
      [{ adjustment_id: 'a', customer_event_id: 'x', type: 'retract', occurred_at: '2020-01-01T00:00:00Z' }, 'occurred_at'],
    ];
    for (const [body, param] of cases) {
      const res = await adjust(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
  });
});
