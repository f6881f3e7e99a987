/**
 * The Events chart's figures (dashboard/chart-data.ts): read a day at a time, so no statement reads more than one day
 * of the account's events; today's figures reused for 10 s at most, a past day's for a minute.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRevenueService, type RevenueService } from './revenue/support';
import { DEMO } from '../../src/demo/setup';
import { adjustmentPath, conversionPath, saasSignupPath } from '../../src/protocol/webhook';
import { dailyActionCounts, dailyValues } from '../../src/server/dashboard/sql';
import { ChartData, PAST_DAY_TTL_MS, SLOW_READ_MS, STALE_TODAY_MS, TODAY_TTL_MS } from '../../src/server/dashboard/chart-data';
import { conversionsChart, daysBetween } from '../../src/server/dashboard/chart';
import type { Queryable } from '../../src/server/db/db';

const DAY = 86_400_000;

describe('the Events chart, a day at a time', () => {
  let r: RevenueService;
  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  it('counts every day, reads one day per statement, and shows today anew after 10 s and a past day after its minute', async () => {
    const statements: Array<{ sql: string; params: readonly unknown[] }> = [];
    const observed: Queryable = {
      query: (sql, params = []) => {
        statements.push({ sql, params });
        return r.svc.db.query(sql, params);
      },
    };
    let clock = 1_000_000;
    const chart = new ChartData(observed, { clock: () => clock });
    const now = new Date();
    const days = daysBetween(new Date(now.getTime() - 13 * DAY), now);
    const today = days[days.length - 1]!;
    const twoDaysAgo = new Date(now.getTime() - 2 * DAY);
    const earlier = twoDaysAgo.toISOString().slice(0, 10);
    let n = 0;
    const signupToday = async () =>
      expect((await r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), { allow_uncorrelated: true, customer_event_id: `cd-${n++}`, customer_id: `cus_${n}` })).status).toBe(200);
    const stageEarlier = async () =>
      expect((await r.post(conversionPath(r.setup.site.site_key, DEMO.stageTriggerKey), { customer_event_id: `cd-${n++}`, customer_id: `cus_${n}`, occurred_at: twoDaysAgo.toISOString() })).status).toBe(200);
    const perDay = async () => {
      const totals: Record<string, number> = {};
      for (const c of await chart.conversions(r.setup.accountId, undefined, days, today)) totals[c.day] = (totals[c.day] ?? 0) + c.count;
      return totals;
    };

    await signupToday();
    await stageEarlier();
    const first = await perDay();
    expect(first[today]).toBeGreaterThan(0);
    expect(first[earlier]).toBeGreaterThan(0);
    expect(Object.keys(first).sort()).toEqual([earlier, today]);
    // Fourteen statements, one per day, each over one day.
    expect(statements).toHaveLength(days.length);
    for (const { params } of statements) expect((params[2] as Date).getTime() - (params[1] as Date).getTime()).toBe(DAY);

    // More conversions: views within 10 s read nothing; then today's show, the past day's after its minute.
    await signupToday();
    await stageEarlier();
    statements.length = 0;
    expect(await perDay()).toEqual(first);
    expect(statements).toHaveLength(0);
    clock += TODAY_TTL_MS + 1;
    const second = await perDay();
    expect(second[today]).toBeGreaterThan(first[today]!);
    expect(second[earlier]).toBe(first[earlier]);
    expect(statements).toHaveLength(1); // today only

    clock += PAST_DAY_TTL_MS;
    const third = await perDay();
    expect(third[earlier]).toBeGreaterThan(first[earlier]!);
    expect(third[today]).toBe(second[today]);

    // The site filter and the value view are their own figures.
    expect(await chart.conversions(r.setup.accountId, 'site_other', days, today)).toEqual([]);
    expect(await chart.value(r.setup.accountId, undefined, days, today)).toEqual([]);
  });
});

describe('the Events chart of a busy account', () => {
  let r: RevenueService;
  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  it('shows a slow day from its last read while reading it again, one read of the account at a time', async () => {
    let clock = 1_000_000;
    let inFlight = 0;
    let mostInFlight = 0;
    let reads = 0;
    // Every statement takes SLOW_READ_MS on the chart's clock: each day's read is a slow one.
    const slow: Queryable = {
      query: async (sql, params = []) => {
        reads++;
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        try {
          return await r.svc.db.query(sql, params);
        } finally {
          inFlight--;
          clock += SLOW_READ_MS;
        }
      },
    };
    const chart = new ChartData(slow, { clock: () => clock });
    const now = new Date();
    const days = daysBetween(new Date(now.getTime() - 13 * DAY), now);
    const today = days[days.length - 1]!;
    let n = 0;
    const signupToday = async () =>
      expect((await r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), { allow_uncorrelated: true, customer_event_id: `busy-${n++}` })).status).toBe(200);
    const todays = async () => (await chart.conversions(r.setup.accountId, undefined, days, today)).filter((c) => c.day === today).reduce((sum, c) => sum + c.count, 0);

    await signupToday();
    const first = await todays();
    expect(first).toBeGreaterThan(0);
    await signupToday();

    // Past today's reuse period: the view answers from the last read at once, and one read of today starts behind it.
    clock += TODAY_TTL_MS + 1;
    reads = 0;
    expect(await todays()).toBe(first);
    expect(await todays()).toBe(first);
    await vi.waitFor(async () => expect(await todays()).toBeGreaterThan(first)); // the background read's figures
    const readsOfOneDay = reads;
    expect(readsOfOneDay).toBeGreaterThan(0);
    expect(await todays()).toBeGreaterThan(first);
    expect(reads).toBe(readsOfOneDay); // one background read for all those views

    // Past the stale period, a view waits for a new read.
    clock += TODAY_TTL_MS + STALE_TODAY_MS;
    await signupToday();
    const before = reads;
    const third = await todays();
    expect(reads).toBeGreaterThan(before);
    expect(third).toBeGreaterThan(first + 1);

    // Every past day expired at once: their background reads ran one after the other.
    clock += PAST_DAY_TTL_MS + 1;
    const beforePast = reads;
    await todays();
    await vi.waitFor(() => expect(reads - beforePast).toBeGreaterThanOrEqual(days.length - 1));
    await vi.waitFor(() => expect(inFlight).toBe(0));
    expect(mostInFlight).toBe(1);
  });
});

describe('the Events chart, a page of events at a time', () => {
  let r: RevenueService;
  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  it('gives the same figures whatever the page size, a report with two events counted once', async () => {
    // A second live flow on the signup trigger: every signup report then makes two events (one per flow).
    const flow = await r.api('POST', '/v1/flows', {
      site_id: r.setup.site.id,
      name: 'Second signup flow',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: DEMO.triggerKey },
      actions_config: DEMO.actions,
    });
    await r.api('POST', `/v1/flows/${encodeURIComponent(flow.id)}/publish`);
    const earlier = new Date(Date.now() - 2 * DAY).toISOString();
    let n = 0;
    const signup = async (body: Record<string, unknown>) =>
      expect((await r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), { allow_uncorrelated: true, customer_event_id: `pg-${n++}`, customer_id: `cus_${n}`, ...body })).status).toBe(200);
    await signup({ value: 10.1, currency: 'EUR' });
    await signup({ value: 0.2, currency: 'EUR' });
    await signup({ value: 5, currency: 'USD' });
    await signup({});
    const stage = async (body: Record<string, unknown>) =>
      expect((await r.post(conversionPath(r.setup.site.site_key, DEMO.stageTriggerKey), { customer_event_id: `pg-${n++}`, customer_id: 'cus_1', occurred_at: earlier, ...body })).status).toBe(200);
    await stage({ value: 1.000001, currency: 'EUR' });
    await stage({ value: 7, currency: 'EUR' });
    await stage({ value: 99.99, currency: 'EUR' });
    expect((await r.post(adjustmentPath(r.setup.site.site_key), { adjustment_id: 'pg-fix', customer_event_id: 'pg-1', type: 'restate', value: 0.3, currency: 'EUR' })).status).toBe(200);
    await r.drain();
    const twice = await r.svc.db.query<{ n: number }>(`select count(*)::int as n from (select report_id from events where report_id is not null group by 1 having count(*) = 2) x`);
    expect(twice[0]!.n).toBe(4);

    const since = new Date(Date.now() - 3 * DAY);
    const until = new Date(Date.now() + DAY);
    const read = async (pageEvents: number) => {
      const statements: string[] = [];
      const observed: Queryable = { query: (sql, params = []) => (statements.push(sql), r.svc.db.query(sql, params)) };
      const conversions = await dailyActionCounts(observed, { accountId: r.setup.accountId, from: since, to: until, pageEvents });
      const value = await dailyValues(observed, { accountId: r.setup.accountId, from: since, to: until, pageEvents });
      return { conversions, value, statements: statements.length };
    };
    const whole = await read(1000);
    expect(whole.statements).toBe(2);
    const total = whole.conversions.reduce((sum, c) => sum + c.count, 0);
    expect(total).toBe(8 * DEMO.actions.length + 3 * DEMO.stageActions.length);
    const today = new Date().toISOString().slice(0, 10);
    const day2 = earlier.slice(0, 10);
    // Each report once (not once per flow), the restatement applied, six decimals exact.
    expect(whole.value).toEqual([
      { day: day2, currency: 'EUR', value: 107.990001, conversions: 3 },
      { day: today, currency: 'EUR', value: 10.4, conversions: 2 },
      { day: today, currency: 'USD', value: 5, conversions: 1 },
    ]);
    for (const pageEvents of [1, 2, 3, 11]) {
      const paged = await read(pageEvents);
      expect(paged.conversions).toEqual(whole.conversions);
      expect(paged.value).toEqual(whole.value);
      // 11 events: a statement per page of each view (a page ends with the rest of its last event's millisecond, so
      // a report's two events share a page), and one more where the last page's head came out full.
      expect(paged.statements).toBeGreaterThan(2);
      expect(paged.statements).toBeLessThanOrEqual(2 * (Math.floor(11 / pageEvents) + 1));
    }
  });

  it("counts a conversion that an erasure stopped as erased, not failed, and shows it in the legend only then", async () => {
    const since = new Date(Date.now() - 3 * DAY);
    const until = new Date(Date.now() + DAY);
    const countOf = async (status: string) =>
      (await dailyActionCounts(r.svc.db, { accountId: r.setup.accountId, from: since, to: until, pageEvents: 1000 }))
        .filter((c) => c.status === status).reduce((sum, c) => sum + c.count, 0);
    const failedBefore = await countOf('failed');
    const legendBefore = conversionsChart(await dailyActionCounts(r.svc.db, { accountId: r.setup.accountId, from: since, to: until, pageEvents: 1000 }), daysBetween(since, until)).toString();
    expect(legendBefore).not.toContain('erased');
    // Reported, not yet sent (no drain), then its person erased: its actions are stored as failed with code 'erased'.
    expect((await r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), { allow_uncorrelated: true, customer_event_id: 'erase-me', customer_id: 'cus_erase_me' })).status).toBe(200);
    expect((await r.api('POST', '/v1/erasures', { customer_id: 'cus_erase_me' })).matched.events).toBeGreaterThan(0);
    await r.drain();
    const stopped = await r.svc.db.query<{ n: number }>(`select count(*)::int as n from event_actions where status = 'failed' and error ->> 'code' = 'erased'`);
    expect(stopped[0]!.n).toBeGreaterThan(0);
    const counts = await dailyActionCounts(r.svc.db, { accountId: r.setup.accountId, from: since, to: until, pageEvents: 1000 });
    expect(await countOf('erased')).toBe(stopped[0]!.n);
    expect(await countOf('failed')).toBe(failedBefore);
    expect(conversionsChart(counts, daysBetween(since, until)).toString()).toContain('erased</span>');
  });
});

describe('the chart axis', () => {
  it('puts its grid lines at whole numbers (never 12.5), the top at or just above the largest day', () => {
    const days = ['2026-11-20', '2026-11-21'];
    const labels = (largest: number) => {
      const markup = conversionsChart([{ day: days[0]!, status: 'delivered', count: largest }], days).toString();
      // The plot's own axis (the copy a phone shows over the scrolled plot is aria-hidden, the same labels).
      const plot = /<svg class="chart-plot"[\s\S]*?<\/svg>/.exec(markup)![0];
      return [...plot.matchAll(/<text x="38" [^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    };
    expect(labels(3)).toEqual(['0', '2', '4']);
    expect(labels(5)).toEqual(['0', '3', '6']);
    expect(labels(25)).toEqual(['0', '15', '30']);
    expect(labels(50)).toEqual(['0', '30', '60']);
    expect(labels(100)).toEqual(['0', '50', '100']);
    expect(labels(101)).toEqual(['0', '100', '200']);
  });

  it("keeps the phone's copy of the axis out of the accessible tree, with the plot's labels", () => {
    const days = ['2026-11-20', '2026-11-21'];
    const markup = conversionsChart([{ day: days[0]!, status: 'delivered', count: 3 }], days).toString();
    const copy = /<svg class="chart-axis"[^>]*>[\s\S]*?<\/svg>/.exec(markup)![0];
    expect(copy).toContain('aria-hidden="true"');
    expect([...copy.matchAll(/<text [^>]*>([^<]*)<\/text>/g)].map((m) => m[1])).toEqual(['0', '2', '4']);
    expect(markup.match(/role="img"/g)).toHaveLength(1);
  });
});
