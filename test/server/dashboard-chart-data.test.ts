/**
 * The Events chart's figures (dashboard/chart-data.ts): read a day at a time, so no statement reads more than one day
 * of the account's events; today's figures reused for 10 s at most, a past day's for a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './revenue/support';
import { DEMO } from '../../src/demo/setup';
import { conversionPath, saasSignupPath } from '../../src/protocol/webhook';
import { ChartData, PAST_DAY_TTL_MS, TODAY_TTL_MS } from '../../src/server/dashboard/chart-data';
import { daysBetween } from '../../src/server/dashboard/chart';
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
