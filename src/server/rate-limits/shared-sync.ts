/**
 * Shares the counts of the instances on one PostgreSQL: every sync interval (1 s by default) one statement adds this
 * instance's new counts and reads back each key's total and the keys near their limit elsewhere; once a window ends,
 * its rows are deleted. No request waits for it: a request is counted in memory and decided on what the last sync read.
 */
import type { Database } from '../db/db';
import { addAndReadCounts, deleteCountsBefore, type HotThreshold } from './sql';
import type { WindowCounts } from './window-counts';

export class SharedSync {
  private lastWindow = -1;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly counts: WindowCounts,
    /** Per bucket: counts at or above this are read back even for keys this instance has not seen (half its limit). */
    private readonly hot: () => HotThreshold[],
  ) {}

  /** One sync; never two at once (a call while one runs waits for it, then runs). Throws what the database threw. */
  sync(): Promise<void> {
    const next = this.running.catch(() => undefined).then(() => this.syncOnce());
    this.running = next;
    return next;
  }

  private async syncOnce(): Promise<void> {
    const { windowStart, counts } = this.counts.takePending();
    if (windowStart !== this.lastWindow) {
      // The window before the current one is kept while an instance with a slower clock may still add to it.
      await deleteCountsBefore(this.db, windowStart - this.counts.windowMs);
      this.lastWindow = windowStart;
    }
    const hot = this.hot();
    if (counts.length === 0 && hot.length === 0) return;
    let totals;
    try {
      totals = await addAndReadCounts(this.db, windowStart, counts, hot);
    } catch (error) {
      this.counts.restorePending(windowStart, counts);
      throw error;
    }
    this.counts.applyShared(windowStart, totals);
  }
}
