/**
 * Adjustments on the legacy Google Ads API path (connections that upload through uploadClickConversions): restatements
 * and retractions go through ConversionAdjustmentUploadService.UploadConversionAdjustments, naming the conversion by
 * the order id its upload carried, against the strict local fake of the Google Ads API (which remembers what was
 * uploaded and answers row errors as Google documents them).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { insertAdjustment } from '../../../src/server/webhook/adjustment-sql';
import { getEvent } from '../../../src/server/api/events';
import { loadDeliveryRecords } from '../../../src/server/delivery/sql';
import { dailyValues } from '../../../src/server/dashboard/sql';
import { eventPage } from '../../../src/server/dashboard/pages/event';
import { startFakeGoogleAds, validateAdjustmentBody, type FakeGoogleAds } from '../../../src/demo/fake-google-ads';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { CUSTOMER_ID, createDeliveryFixture, insertReportedEvent, memoryLog, settingsFor, steppableClock, type DeliveryFixture } from '../delivery/fixtures';

const ACTION = `customers/${CUSTOMER_ID}/conversionActions/987654321`;
const HOUR_MS = 3_600_000;
const CONVERSION_AGE_MS = 25 * HOUR_MS;

describe('the fake Google Ads API checks conversion adjustment uploads strictly', () => {
  const good = { conversionAction: ACTION, adjustmentType: 'RETRACTION', adjustmentDateTime: '2026-11-20 10:00:00-05:00', orderId: 'abc' };
  it('accepts a retraction and a restatement named by order id', () => {
    expect(validateAdjustmentBody({ partialFailure: true, conversionAdjustments: [good] })).toEqual([]);
    expect(validateAdjustmentBody({ partialFailure: true, conversionAdjustments: [{ ...good, adjustmentType: 'RESTATEMENT', restatementValue: { adjustedValue: 19.9, currencyCode: 'EUR' } }] })).toEqual([]);
  });
  it('reports each request outside the reference', () => {
    const problems = (adjustment: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      validateAdjustmentBody({ partialFailure: true, conversionAdjustments: [adjustment], ...extra }).join('; ');
    expect(validateAdjustmentBody({ conversionAdjustments: [good] })).toContain('partialFailure is required and must be true');
    expect(problems({ ...good, restatementValue: { adjustedValue: 1 } })).toMatch(/must not be set for a retraction/);
    expect(problems({ ...good, adjustmentType: 'RESTATEMENT' })).toMatch(/restatementValue is required/);
    expect(problems({ ...good, adjustmentType: 'RESTATEMENT', restatementValue: { adjustedValue: -1, currencyCode: 'eur' } })).toMatch(/at least 0.*ISO 4217/);
    expect(problems({ ...good, adjustmentType: 'ENHANCEMENT' })).toMatch(/never sends ENHANCEMENT/);
    expect(problems({ ...good, adjustmentDateTime: '2026-11-20T10:00:00Z' })).toMatch(/adjustmentDateTime/);
    expect(problems({ ...good, orderId: undefined })).toMatch(/names no conversion/);
    expect(problems({ ...good, gclidDateTimePair: { gclid: 'g', conversionDateTime: '2026-11-20 09:00:00-05:00' } })).toMatch(/by that order id alone/);
    expect(problems({ ...good, conversionValue: 3 })).toMatch(/unknown field 'conversionValue'/);
    expect(problems({ ...good, conversionAction: '987654321' })).toMatch(/conversionAction must be/);
    expect(problems(good, { jobId: -1 })).toMatch(/jobId/);
  });
});

describe.each(DATABASE_KINDS)('legacy Google Ads API adjustments on $name', (kind) => {
  let db: Database;
  let ads: FakeGoogleAds;
  let google: FakeGoogle;
  let fx: DeliveryFixture;
  const workers: Array<{ stop(): Promise<void> }> = [];
  /** How far ahead of the real clock the fake Google Ads API and the next worker() stand. */
  let ahead = 0;

  beforeAll(async () => {
    [db, ads, google] = await Promise.all([kind.open(), startFakeGoogleAds({ now: () => new Date(Date.now() + ahead) }), startFakeGoogle()]);
    fx = await createDeliveryFixture(db, { timezone: 'America/New_York', refreshToken: google.issueRefreshToken() });
  });
  afterAll(async () => {
    await Promise.all([db.close(), ads.close(), google.close()]);
  });
  afterEach(async () => {
    ahead = 0;
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  function worker() {
    const clock = steppableClock(new Date(Date.now() + ahead + 60_000));
    const w = startDeliveryWorker({ db, settings: settingsFor(ads.url, {}, google), log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    workers.push(w);
    return w;
  }

  /**
   * A conversion worth EUR 29 uploaded through uploadClickConversions, `ageMs` old (25 hours by default: Google adjusts
   * a conversion once it is 24 hours old, TOO_RECENT_CONVERSION); its order id as Google got it.
   */
  async function uploaded(ageMs = CONVERSION_AGE_MS): Promise<{ customerEventId: string; eventId: string; actionId: string; orderId: string; conversionDateTime: string; occurredAt: Date }> {
    const occurredAt = new Date(Date.now() - ageMs);
    const { eventId, actionIds, customerEventId } = await insertReportedEvent(db, fx, { occurredAt });
    await db.query(`update events set value = 29, currency = 'EUR' where id = $1`, [eventId]);
    const before = ads.requests.length;
    await worker().drain();
    const [upload] = ads.requests.slice(before).filter((r) => r.path.endsWith(':uploadClickConversions'));
    expect(upload!.problems).toEqual([]);
    const conversion = upload!.body.conversions[0];
    expect(conversion).toMatchObject({ conversionValue: 29, currencyCode: 'EUR' });
    return { customerEventId, eventId, actionId: actionIds[0]!, orderId: conversion.orderId, conversionDateTime: conversion.conversionDateTime, occurredAt };
  }

  async function adjust(customerEventId: string, adjustmentId: string, type: 'restate' | 'retract', value: number | null = null, occurredAt = new Date()) {
    const recorded = await db.transaction((tx) =>
      insertAdjustment(tx, { siteId: fx.site.id, adjustmentId, customerEventId, type, value, currency: value === null ? null : 'EUR', occurredAt }),
    );
    expect(recorded).toMatchObject({ ok: true, events: 1 });
    const before = ads.requests.length;
    await worker().drain();
    const [result] = await db.query<{ status: string; reason: string | null; request: Record<string, unknown> | null; attempts: number }>(
      `select r.status, r.reason, r.request, r.attempts from adjustment_results r join adjustments a on a.id = r.adjustment_id where a.adjustment_id = $1`,
      [adjustmentId],
    );
    return { result: result!, requests: ads.requests.slice(before).filter((r) => r.path.endsWith(':uploadConversionAdjustments')) };
  }

  it('restates by order id with the new value, then retracts; Google gets exactly the documented fields', async () => {
    const conversion = await uploaded();
    const restated = await adjust(conversion.customerEventId, `fix-${kind.name}`, 'restate', 19.9);
    expect(restated.requests).toHaveLength(1);
    const request = restated.requests[0]!;
    expect(request.path).toBe(`/v26/customers/${CUSTOMER_ID}:uploadConversionAdjustments`);
    expect(request.problems).toEqual([]);
    expect(request.answeredStatus).toBe(200);
    expect(request.headers['developer-token']).toBeTruthy();
    expect(request.body).toEqual({
      partialFailure: true,
      conversionAdjustments: [
        {
          conversionAction: ACTION,
          adjustmentType: 'RESTATEMENT',
          adjustmentDateTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?-0[45]:00$/),
          orderId: conversion.orderId,
          restatementValue: { adjustedValue: 19.9, currencyCode: 'EUR' },
        },
      ],
    });
    expect(restated.result).toMatchObject({ status: 'adjusted', reason: null, attempts: 1 });
    expect(restated.result.request).toMatchObject({ operation: 'UploadConversionAdjustments', adjustment_type: 'RESTATEMENT', order_id: conversion.orderId, adjusted_value: 19.9, currency_code: 'EUR' });

    const retracted = await adjust(conversion.customerEventId, `refund-${kind.name}`, 'retract');
    expect(retracted.requests).toHaveLength(1);
    expect(retracted.requests[0]!.problems).toEqual([]);
    expect(retracted.requests[0]!.body.conversionAdjustments).toEqual([
      { conversionAction: ACTION, adjustmentType: 'RETRACTION', adjustmentDateTime: expect.any(String), orderId: conversion.orderId },
    ]);
    expect(retracted.result).toMatchObject({ status: 'adjusted', reason: null });

    // A second retraction: Google answers CONVERSION_ALREADY_RETRACTED, which is what was asked for.
    const again = await adjust(conversion.customerEventId, `refund-again-${kind.name}`, 'retract');
    expect((again.requests[0]!.answer as { partialFailureError?: { message: string } }).partialFailureError?.message).toMatch(/already retracted/);
    expect(again.result).toMatchObject({ status: 'adjusted' });
    expect(again.result.request).toMatchObject({ deduplicated: 'CONVERSION_ALREADY_RETRACTED' });
  });

  it('a restatement after a retraction is refused; one stored before that rule is failed with Google\'s reason, not adjusted: Google keeps the conversion retracted', async () => {
    const conversion = await uploaded();
    expect((await adjust(conversion.customerEventId, `cancel-${kind.name}`, 'retract')).result).toMatchObject({ status: 'adjusted' });
    const refused = await db.transaction((tx) =>
      insertAdjustment(tx, { siteId: fx.site.id, adjustmentId: `refused-${kind.name}`, customerEventId: conversion.customerEventId, type: 'restate', value: 49, currency: 'EUR', occurredAt: new Date() }),
    );
    expect(refused).toEqual({ ok: false, reason: 'retracted_report' });
    // A restatement stored after a retraction before the webhook refused it (older data): the retraction is hidden
    // for the insert, then put back.
    await db.query(`update adjustments set type = 'restate', value = 0, currency = 'EUR' where adjustment_id = $1`, [`cancel-${kind.name}`]);
    const restated = await adjust(conversion.customerEventId, `reinstate-${kind.name}`, 'restate', 49).finally(() =>
      db.query(`update adjustments set type = 'retract', value = null, currency = null where adjustment_id = $1`, [`cancel-${kind.name}`]),
    );
    expect(restated.requests).toHaveLength(1);
    expect(restated.result.status).toBe('failed');
    expect(restated.result.reason).toMatch(/already retracted.*not processed/);
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ retracted: true, value: 0 });
  });

  it('two restatements dated at the same second (or before the conversion) both apply, the later one last', async () => {
    const conversion = await uploaded();
    // Both before the conversion: each was moved to the conversion + 1 s, the same time, and Google ignored the second.
    const before = new Date(conversion.occurredAt.getTime() - 60 * 60_000);
    const first = await adjust(conversion.customerEventId, `up-${kind.name}`, 'restate', 49, before);
    const second = await adjust(conversion.customerEventId, `down-${kind.name}`, 'restate', 39, before);
    expect([first.result.status, second.result.status]).toEqual(['adjusted', 'adjusted']);
    const [t1, t2] = [first, second].map((a) => a.requests[0]!.body.conversionAdjustments[0].adjustmentDateTime as string);
    expect(t2! > t1!).toBe(true);
    expect(t1! > conversion.conversionDateTime).toBe(true);
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 39, retracted: false });
  });

  it('a restatement that arrives after another but is dated earlier is superseded: never sent, Google keeps the later-dated value', async () => {
    const conversion = await uploaded();
    const now = Date.now();
    await adjust(conversion.customerEventId, `late-dated-${kind.name}`, 'restate', 59, new Date(now));
    const older = await adjust(conversion.customerEventId, `early-dated-${kind.name}`, 'restate', 45, new Date(now - 5 * 60_000));
    expect(older.requests).toHaveLength(0);
    expect(older.result).toMatchObject({ status: 'adjusted', attempts: 0, request: null, reason: expect.stringMatching(/^Not sent: superseded\./) });
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 59 });
    // One dated between them is superseded too; one dated after both goes out.
    const between = await adjust(conversion.customerEventId, `between-dated-${kind.name}`, 'restate', 49, new Date(now - 60_000));
    expect(between.requests).toHaveLength(0);
    expect(between.result).toMatchObject({ status: 'adjusted', reason: expect.stringMatching(/^Not sent: superseded\./) });
    const latest = await adjust(conversion.customerEventId, `latest-dated-${kind.name}`, 'restate', 39, new Date(now + 1_000));
    expect(latest.requests).toHaveLength(1);
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 39 });
  });

  it('two restatements of one conversion arriving at once end at the latest-dated one, whichever commits first', async () => {
    for (const first of ['later-dated', 'earlier-dated'] as const) {
      const conversion = await uploaded();
      const now = Date.now();
      const restatement = (name: string, value: number, occurredAt: Date) =>
        ({ siteId: fx.site.id, adjustmentId: `${name}-${first}-${kind.name}`, customerEventId: conversion.customerEventId, type: 'restate' as const, value, currency: 'EUR', occurredAt });
      const later = restatement('down', 29, new Date(now - 60_000));
      const earlier = restatement('up', 49, new Date(now - 120_000));
      const [a, b] = first === 'later-dated' ? [later, earlier] : [earlier, later];
      // The first holds its transaction open after its insert; the second starts meanwhile and waits for the report's
      // lock (on PostgreSQL: seen waiting on a lock; the embedded store runs one transaction at a time).
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const insertedFirst = new Promise<void>((resolve) => (inserted = resolve));
      const firstTx = db.transaction(async (tx) => {
        const recorded = await insertAdjustment(tx, a);
        inserted();
        await held;
        return recorded;
      });
      await insertedFirst;
      const secondTx = db.transaction((tx) => insertAdjustment(tx, b));
      if (kind.name === 'postgres') {
        await expect.poll(async () => (await db.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`))[0]!.n).toBeGreaterThan(0);
      }
      release();
      expect(await Promise.all([firstTx, secondTx])).toEqual([{ ok: true, events: 1, inserted: true }, { ok: true, events: 1, inserted: true }]);
      await worker().drain();
      expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 29 });
      const superseded = await db.query<{ adjustment_id: string }>(
        `select j.adjustment_id from adjustments j join reports r on r.id = j.report_id where r.customer_event_id = $1 and j.superseded`,
        [conversion.customerEventId],
      );
      // Only when the earlier-dated one came second is it superseded; the other way round both went out, in order.
      expect(superseded.map((x) => x.adjustment_id)).toEqual(first === 'later-dated' ? [earlier.adjustmentId] : []);
    }
  });

  /**
   * What each reader says the conversion stands at: the API's current_value, the value a first send would fold in
   * (delivery's latest_adjustment), the value chart's day, and which restatements the event page badges superseded.
   */
  async function readers(conversion: { eventId: string; actionId: string }) {
    const event = await getEvent(db, fx.accountId, conversion.eventId);
    const delivery = (await loadDeliveryRecords(db, [conversion.actionId])).get(conversion.actionId)!;
    const [{ sort_at: sortAt }] = (await db.query<{ sort_at: Date }>('select sort_at from events where id = $1', [conversion.eventId])) as [{ sort_at: Date }];
    const chart = await dailyValues(db, { accountId: fx.accountId, from: sortAt, to: new Date(sortAt.getTime() + 1) });
    const session = { accountId: fx.accountId, accountName: 'Acme', csrfToken: 'csrf', sessionToken: 'tok' };
    const headings = [...eventPage(session, event).matchAll(/<h3>Restated <span class="hint">(.*?)<\/span>(.*?)<\/h3>/g)];
    return {
      api: event.current_value,
      firstSend: Number(delivery.latest_adjustment?.value),
      chart: chart.map((day) => day.value),
      badged: headings.filter((m) => m[2]!.includes('>superseded</span>')).map((m) => m[1]),
    };
  }

  it("reads a store's restatements recorded before migration 32 as Google kept them: the one dated earlier that arrived later", async () => {
    const conversion = await uploaded();
    const now = Date.now();
    await adjust(conversion.customerEventId, `pre32-down-${kind.name}`, 'restate', 29, new Date(now));
    // Recorded as a store before migration 32 recorded it: not superseded, queued, then sent after the one before it.
    const up = `pre32-up-${kind.name}`;
    await db.transaction((tx) =>
      insertAdjustment(tx, { siteId: fx.site.id, adjustmentId: up, customerEventId: conversion.customerEventId, type: 'restate', value: 49, currency: 'EUR', occurredAt: new Date(now - 5 * 60_000) }),
    );
    await db.query(`update adjustments set superseded = false where adjustment_id = $1`, [up]);
    await db.query(`update adjustment_results set status = 'queued', reason = null where adjustment_id = (select id from adjustments where adjustment_id = $1)`, [up]);
    await worker().drain();
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 49 });
    expect(await readers(conversion)).toEqual({ api: 49, firstSend: 49, chart: [49], badged: [] });
    // One dated after the one standing (49, dated earlier than the 29) goes out and stands; one dated before it does not.
    expect((await adjust(conversion.customerEventId, `post32-early-${kind.name}`, 'restate', 19, new Date(now - 10 * 60_000))).requests).toHaveLength(0);
    expect((await adjust(conversion.customerEventId, `post32-between-${kind.name}`, 'restate', 39, new Date(now - 60_000))).requests).toHaveLength(1);
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 39 });
    expect(await readers(conversion)).toEqual({ api: 39, firstSend: 39, chart: [39], badged: [`post32-early-${kind.name}`] });
  });

  it.skipIf(kind.name !== 'postgres')('reads restatements dated alike in the order they committed, which is the order Google got them in', async () => {
    // The first transaction begins (its now(), the created_at it records, is taken then) but takes the report's lock
    // only after the second began later, recorded its restatement and committed: created_at says the opposite of
    // the order they arrived in.
    const conversion = await uploaded();
    const at = new Date(Date.now() - 60_000);
    const restatement = (name: string, value: number) =>
      ({ siteId: fx.site.id, adjustmentId: `${name}-${kind.name}`, customerEventId: conversion.customerEventId, type: 'restate' as const, value, currency: 'EUR', occurredAt: at });
    let began!: () => void;
    const firstBegan = new Promise<void>((resolve) => (began = resolve));
    let release!: () => void;
    const secondCommitted = new Promise<void>((resolve) => (release = resolve));
    const firstTx = db.transaction(async (tx) => {
      await tx.query('select now()');
      began();
      await secondCommitted;
      return insertAdjustment(tx, restatement('began-first', 31));
    });
    await firstBegan;
    expect(await db.transaction((tx) => insertAdjustment(tx, restatement('committed-first', 37)))).toMatchObject({ ok: true, inserted: true });
    release();
    expect(await firstTx).toMatchObject({ ok: true, inserted: true });
    const recorded = await db.query<{ adjustment_id: string }>(
      `select j.adjustment_id from adjustments j join reports r on r.id = j.report_id where r.customer_event_id = $1 order by j.created_at`,
      [conversion.customerEventId],
    );
    expect(recorded.map((x) => x.adjustment_id)).toEqual([`began-first-${kind.name}`, `committed-first-${kind.name}`]);
    await worker().drain();
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 31 });
    const event = await getEvent(db, fx.accountId, conversion.eventId);
    expect(event.adjustments.map((a) => a.adjustment_id)).toEqual([`committed-first-${kind.name}`, `began-first-${kind.name}`]);
    expect(await readers(conversion)).toEqual({ api: 31, firstSend: 31, chart: [31], badged: [] });
  });

  it('a resend of an adjustment carries the same time', async () => {
    const conversion = await uploaded();
    ads.respondWith({ kind: 'serverError', status: 503 });
    const at = new Date(Date.now() - 60 * 60_000);
    const first = await adjust(conversion.customerEventId, `same-time-${kind.name}`, 'restate', 12, at);
    await db.query(`update adjustment_results set due_at = now() - interval '1 second' where status = 'queued'`);
    const before = ads.requests.length;
    await worker().drain();
    const resent = ads.requests.slice(before).filter((r) => r.path.endsWith(':uploadConversionAdjustments'));
    expect(resent[0]!.body).toEqual(first.requests[0]!.body);
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ value: 12 });
  });

  it("says why when Google refuses an adjustment's row (partial failure), and never sends it again", async () => {
    const conversion = await uploaded();
    ads.respondWith({ kind: 'rowError', code: 'CONVERSION_EXPIRED', message: "Adjustment can't be made to a conversion that occurred more than 54 days ago." });
    const refused = await adjust(conversion.customerEventId, `late-${kind.name}`, 'retract');
    expect(refused.requests).toHaveLength(1);
    expect(refused.result.status).toBe('failed');
    expect(refused.result.reason).toMatch(/more than 54 days ago/);
    const before = ads.requests.length;
    await worker().drain();
    expect(ads.requests.length).toBe(before);
  });

  it('sends an adjustment of a conversion under 24 hours old at once (a same-day refund): Google no longer makes it wait', async () => {
    // Google Ads Developer Blog, 2024-08-12: since 9 September 2024 adjustments "can be uploaded immediately after the
    // original conversion has been uploaded"; TOO_RECENT_CONVERSION is no longer answered.
    const conversion = await uploaded(2 * HOUR_MS);
    const early = await adjust(conversion.customerEventId, `same-day-refund-${kind.name}`, 'retract');
    expect(early.requests).toHaveLength(1);
    expect(early.requests[0]!.problems).toEqual([]);
    expect(early.result).toMatchObject({ status: 'adjusted', reason: null, attempts: 1 });
    expect(ads.held(ACTION, conversion.orderId)).toMatchObject({ retracted: true });
  });

  it('waits rather than fails should Google still answer TOO_RECENT_CONVERSION', async () => {
    const old = await uploaded();
    ads.respondWith({ kind: 'rowError', code: 'TOO_RECENT_CONVERSION', message: "Adjustment can't be recorded because the conversion occurred too recently." });
    const answered = await adjust(old.customerEventId, `early-by-google-${kind.name}`, 'retract');
    expect(answered.requests).toHaveLength(1);
    expect(answered.result).toMatchObject({ status: 'queued', reason: expect.stringMatching(/too recently/) });
    // Sent again when due, it is applied (nothing left queued for the next test).
    await db.query(`update adjustment_results set due_at = now() - interval '1 second' where status = 'queued'`);
    await worker().drain();
    expect(ads.held(ACTION, old.orderId)).toMatchObject({ retracted: true });
  });

  it('retries a 5xx with the same adjustment, and applies it once Google answers', async () => {
    const conversion = await uploaded();
    ads.respondWith({ kind: 'serverError', status: 503 });
    const first = await adjust(conversion.customerEventId, `retry-${kind.name}`, 'restate', 9);
    expect(first.result).toMatchObject({ status: 'queued', attempts: 1 });
    await db.query(`update adjustment_results set due_at = now() - interval '1 second' where status = 'queued'`);
    const before = ads.requests.length;
    await worker().drain();
    const resent = ads.requests.slice(before).filter((r) => r.path.endsWith(':uploadConversionAdjustments'));
    expect(resent).toHaveLength(1);
    expect(resent[0]!.body).toEqual(first.requests[0]!.body);
    const [row] = await db.query<{ status: string; attempts: number }>(
      `select r.status, r.attempts from adjustment_results r join adjustments a on a.id = r.adjustment_id where a.adjustment_id = $1`,
      [`retry-${kind.name}`],
    );
    expect(row).toMatchObject({ status: 'adjusted', attempts: 2 });
  });
});
