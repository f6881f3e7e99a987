/**
 * The Events chart's figures, read a day at a time, the past days kept for a minute.
 *
 * Read over the whole window in one statement, the chart cost every view of the Events page a scan of the account's
 * 14 days of events: with 180,000 of them (a 25-minute soak at 120 reports a second), 0.5 s for the conversions view
 * and 0.8 s for the value view, during which the embedded store, which runs one statement at a time, answered nothing
 * else (snapshots, reports and /healthz waited up to a second). A day at a time, each statement reads that day's
 * events by the account's index on sort_at, and other statements get their turn between the days; a day before today
 * is read again after PAST_DAY_TTL_MS at most (the page's filters and pages reuse it meanwhile), today's on every view.
 * So a past day's bar may lag by up to a minute (a late delivery, an adjustment); today's never does. Per process.
 */
import type { Queryable } from '../db/db';
import { TtlCache } from '../db/ttl-cache';
import { dailyActionCounts, dailyValues, type DailyActionCount, type DailyValue } from './sql';

/** How long the figures of a day before today are reused. */
export const PAST_DAY_TTL_MS = 60_000;
const DAY_MS = 86_400_000;

type Figures = { conversions: DailyActionCount[]; value: DailyValue[] };
type View = keyof Figures;

export interface ChartDataOptions {
  ttlMs?: number;
  /** The clock of the past days' reuse, in ms; tests inject their own. */
  clock?: () => number;
}

export class ChartData {
  readonly #db: Queryable;
  readonly #pastDays: TtlCache<string, Figures[View]>;

  constructor(db: Queryable, options: ChartDataOptions = {}) {
    this.#db = db;
    this.#pastDays = new TtlCache((key) => this.#readDay(...(JSON.parse(key) as [View, string, string | null, string])), {
      ttlMs: options.ttlMs ?? PAST_DAY_TTL_MS,
      maxEntries: 20_000,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  /** Per day of `days` (YYYY-MM-DD, UTC, oldest first), the account's action counts by status. */
  conversions(accountId: string, siteId: string | undefined, days: readonly string[], today: string): Promise<DailyActionCount[]> {
    return this.#figures('conversions', accountId, siteId, days, today);
  }

  /** Per day of `days`, the account's reported value by currency. */
  value(accountId: string, siteId: string | undefined, days: readonly string[], today: string): Promise<DailyValue[]> {
    return this.#figures('value', accountId, siteId, days, today);
  }

  async #figures<V extends View>(view: V, accountId: string, siteId: string | undefined, days: readonly string[], today: string): Promise<Figures[V]> {
    const rows: Figures[V][number][] = [];
    // One day after the other, never side by side: the store serves others between them.
    for (const day of days) {
      const figures = day === today
        ? await this.#readDay(view, accountId, siteId ?? null, day)
        : await this.#pastDays.get(JSON.stringify([view, accountId, siteId ?? null, day]));
      rows.push(...((figures ?? []) as Figures[V]));
    }
    return rows as Figures[V];
  }

  #readDay(view: View, accountId: string, siteId: string | null, day: string): Promise<Figures[View]> {
    const from = new Date(`${day}T00:00:00.000Z`);
    const to = new Date(from.getTime() + DAY_MS);
    return view === 'conversions'
      ? dailyActionCounts(this.#db, accountId, from, to, siteId ?? undefined)
      : dailyValues(this.#db, accountId, from, to, siteId ?? undefined);
  }
}
