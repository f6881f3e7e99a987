/**
 * The Events chart's figures, read a day at a time: today's reused for TODAY_TTL_MS, a past day's for PAST_DAY_TTL_MS.
 *
 * Read over the whole window in one statement, the chart cost every view of the Events page a scan of the account's
 * 14 days of events: with 180,000 of them (a 25-minute soak at 120 reports a second), 0.5 s for the conversions view
 * and 0.8 s for the value view, during which the embedded store, which runs one statement at a time, answered nothing
 * else (snapshots, reports and /healthz waited up to a second). A day at a time, each day read by the account's index
 * on sort_at, and each day in pages of CHART_PAGE_EVENTS events (sql.ts), one statement a page: a busy day (86,000
 * events held the store for 0.46 to 0.56 s in one statement, in a third soak) is read in statements of a few
 * milliseconds, and other statements get their turn between them. Today's figures reused for 10 s are read at most
 * six times a minute per account, site filter and view, however many people look. So today's bar may lag by up to
 * 10 s and a past day's (a late delivery, an adjustment) by up to a minute; the list below the chart is always
 * current. Per process.
 *
 * A busy day's read takes time even in pages (a day of 90,000 events: 0.3 s), and the view that found it expired used
 * to wait for it: about a second for the whole chart in the fourth soak. So a day whose last read took SLOW_READ_MS or
 * more is answered from that read for a while past its reuse period (today's STALE_TODAY_MS, a past day's
 * STALE_PAST_DAY_MS) while it is read again in the background, one read at a time: on such an account today's bar may
 * lag by up to 70 s, a past day's by up to 11 minutes, and no view waits for a read it did not need to. A day read
 * faster (most accounts' days: a few milliseconds) is read again before it is shown, as before.
 */
import type { Queryable } from '../db/db';
import { TtlCache } from '../db/ttl-cache';
import { dailyActionCounts, dailyValues, type DailyActionCount, type DailyValue } from './sql';

/** How long the figures of a day before today are reused. */
export const PAST_DAY_TTL_MS = 60_000;
/** How long today's figures are reused. */
export const TODAY_TTL_MS = 10_000;
/** A day whose read took this long or more is served stale while it is read again (see above). */
export const SLOW_READ_MS = 50;
/** How long past its reuse period today's slow figures may still be shown. */
export const STALE_TODAY_MS = 60_000;
/** How long past its reuse period a past day's slow figures may still be shown. */
export const STALE_PAST_DAY_MS = 600_000;
const DAY_MS = 86_400_000;

type Figures = { conversions: DailyActionCount[]; value: DailyValue[] };
type View = keyof Figures;

export interface ChartDataOptions {
  /** The clock of the past days' reuse, in ms; tests inject their own. */
  clock?: () => number;
}

export class ChartData {
  readonly #db: Queryable;
  readonly #pastDays: TtlCache<string, Figures[View]>;
  readonly #today: TtlCache<string, Figures[View]>;
  /** Per account, the end of its last read: an account's days are read one after the other, never side by side. */
  readonly #readsOf = new Map<string, Promise<unknown>>();

  constructor(db: Queryable, options: ChartDataOptions = {}) {
    this.#db = db;
    const read = (key: string) => this.#inTurn(...(JSON.parse(key) as [View, string, string | null, string]));
    const clock = options.clock ? { clock: options.clock } : {};
    const serveStale = (forMs: number) => ({ serveStale: { forMs, ifLoadTookMs: SLOW_READ_MS } });
    this.#pastDays = new TtlCache(read, { ttlMs: PAST_DAY_TTL_MS, maxEntries: 20_000, ...serveStale(STALE_PAST_DAY_MS), ...clock });
    this.#today = new TtlCache(read, { ttlMs: TODAY_TTL_MS, maxEntries: 2_000, ...serveStale(STALE_TODAY_MS), ...clock });
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
    // One day after the other (#inTurn): the store serves others between them.
    for (const day of days) {
      const key = JSON.stringify([view, accountId, siteId ?? null, day]);
      const figures = await (day === today ? this.#today : this.#pastDays).get(key);
      rows.push(...((figures ?? []) as Figures[V]));
    }
    return rows as Figures[V];
  }

  /**
   * Reads a day after the account's reads already started (a view's own, and those refreshing stale days in the
   * background), so that the store serves others between them.
   */
  #inTurn(view: View, accountId: string, siteId: string | null, day: string): Promise<Figures[View]> {
    const read = (this.#readsOf.get(accountId) ?? Promise.resolve()).then(() => this.#readDay(view, accountId, siteId, day));
    const settled = read.then(
      () => undefined,
      () => undefined,
    );
    this.#readsOf.set(accountId, settled);
    void settled.then(() => {
      if (this.#readsOf.get(accountId) === settled) this.#readsOf.delete(accountId);
    });
    return read;
  }

  #readDay(view: View, accountId: string, siteId: string | null, day: string): Promise<Figures[View]> {
    const from = new Date(`${day}T00:00:00.000Z`);
    const range = { accountId, from, to: new Date(from.getTime() + DAY_MS), siteId: siteId ?? undefined };
    return view === 'conversions' ? dailyActionCounts(this.#db, range) : dailyValues(this.#db, range);
  }
}
