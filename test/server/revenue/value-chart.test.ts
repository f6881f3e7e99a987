/**
 * The value view of the dashboard's chart: the reported value per day and currency, each report once, as restated or
 * retracted; one chart per currency (never a sum across currencies). Reports go through the real signed webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './support';
import { DEMO } from '../../../src/demo/setup';
import { adjustmentPath, conversionPath, saasSignupPath } from '../../../src/protocol/webhook';
import { dailyValues } from '../../../src/server/dashboard/sql';
import { valueChart, daysBetween } from '../../../src/server/dashboard/chart';
import { eventsPage } from '../../../src/server/dashboard/pages/events';
import { html } from '../../../src/server/dashboard/layout';

const DAY = 86_400_000;
const session = { accountId: 'acct_1', accountName: 'Acme', csrfToken: 'csrf', sessionToken: 'tok' };

describe('value per day on the dashboard chart', () => {
  let r: RevenueService;
  const signup = (body: Record<string, unknown>) => r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), { allow_uncorrelated: true, ...body });
  const dayOf = async (customerEventId: string) => {
    const events = (await r.api('GET', `/v1/events?site_id=${r.setup.site.id}&limit=100`)).data;
    return (events.find((e: any) => e.customer_event_id === customerEventId).occurred_at as string).slice(0, 10);
  };

  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  it('sums each currency per day once per report, at its latest adjustment, and never across currencies', async () => {
    const since = new Date(Date.now() - 3 * DAY);
    const until = new Date(Date.now() + DAY);
    expect(await dailyValues(r.svc.db, { accountId: r.setup.accountId, from: since, to: until })).toEqual([]);

    expect((await signup({ customer_event_id: 'chart-a', customer_id: 'cus_a', value: 29, currency: 'EUR' })).status).toBe(200);
    expect((await signup({ customer_event_id: 'chart-b', customer_id: 'cus_b', value: 49.9, currency: 'EUR' })).status).toBe(200);
    expect((await signup({ customer_event_id: 'chart-c', customer_id: 'cus_c', value: 20, currency: 'USD' })).status).toBe(200);
    expect((await signup({ customer_event_id: 'chart-none', customer_id: 'cus_n' })).status).toBe(200);
    // A later stage of customer a, two days back, on the demo's paid-plan flow.
    const twoDaysAgo = new Date(Date.now() - 2 * DAY).toISOString();
    const stage = await r.post(conversionPath(r.setup.site.site_key, DEMO.stageTriggerKey), { customer_event_id: 'chart-a-paid', customer_id: 'cus_a', value: 100, currency: 'EUR', occurred_at: twoDaysAgo });
    expect(stage.status).toBe(200);
    // b restated to 39.90; c retracted.
    expect((await r.post(adjustmentPath(r.setup.site.site_key), { adjustment_id: 'chart-b-fix', customer_event_id: 'chart-b', type: 'restate', value: 39.9, currency: 'EUR' })).status).toBe(200);
    // An older plan change delivered late (dated a minute before the one recorded): superseded, never counted.
    const older = { adjustment_id: 'chart-b-old', customer_event_id: 'chart-b', type: 'restate', value: 99, currency: 'EUR', occurred_at: new Date(Date.now() - 60_000).toISOString() };
    expect((await r.post(adjustmentPath(r.setup.site.site_key), older)).status).toBe(200);
    expect((await r.post(adjustmentPath(r.setup.site.site_key), { adjustment_id: 'chart-c-refund', customer_event_id: 'chart-c', type: 'retract' })).status).toBe(200);

    const today = await dayOf('chart-a');
    const earlier = await dayOf('chart-a-paid');
    expect(earlier).not.toBe(today);
    const values = await dailyValues(r.svc.db, { accountId: r.setup.accountId, from: since, to: until });
    expect(values).toEqual([
      { day: earlier, currency: 'EUR', value: 100, conversions: 1 },
      { day: today, currency: 'EUR', value: 68.9, conversions: 2 },
      { day: today, currency: 'USD', value: 0, conversions: 1 },
    ]);
    // The site filter applies; another site has nothing.
    expect(await dailyValues(r.svc.db, { accountId: r.setup.accountId, from: since, to: until, siteId: r.setup.site.id })).toEqual(values);
    expect(await dailyValues(r.svc.db, { accountId: r.setup.accountId, from: since, to: until, siteId: 'site_other' })).toEqual([]);

    const days = daysBetween(since, new Date());
    const chart = valueChart(values, days).value;
    const figures = [...chart.matchAll(/data-currency="([A-Z]{3})"/g)].map((m) => m[1]);
    expect(figures).toEqual(['EUR', 'USD']); // one chart per currency, the larger total first
    expect(chart).toContain('EUR 168.90');
    expect(chart).toContain('USD 0.00');
    expect(chart).toContain(`${earlier}: EUR 100.00 from 1 conversion`);
    expect(chart).toContain(`${today}: EUR 68.90 from 2 conversions`);
    expect(chart).toContain('never added together');
    expect(chart).not.toMatch(/188\.9|168\.9 USD/);
  });

  it('says what to report when no conversion carried a value', () => {
    const chart = valueChart([], daysBetween(new Date(Date.now() - 13 * DAY), new Date())).value;
    expect(chart).toContain('No conversion in these 14 days carried a value');
  });

  it('offers both views on the Events page, keeps the view across filters and pages, and marks the current one', () => {
    const data = { events: [], nextCursor: '2026-11-20T00:00:00.000Z', filters: { status: 'failed' }, sites: [], flows: [], statuses: ['failed'], chart: html`<svg></svg>` };
    const counts = eventsPage(session, { ...data, chartView: 'conversions' });
    expect(counts).toContain('<h2>Deliveries per day</h2>');
    expect(counts).toContain('href="/dashboard/events?status=failed#chart" aria-current="true">Conversions</a>');
    expect(counts).toContain('href="/dashboard/events?status=failed&amp;chart=value#chart">Value</a>');
    const value = eventsPage(session, { ...data, chartView: 'value' });
    expect(value).toContain('<h2>Value per day</h2>');
    expect(value).toContain('chart=value#chart" aria-current="true">Value</a>');
    expect(value).toContain('<input type="hidden" name="chart" value="value">');
    expect(value).toContain('starting_after=2026-11-20T00%3A00%3A00.000Z&amp;chart=value');
  });
});
