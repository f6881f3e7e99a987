/**
 * Request counts per key in fixed windows aligned to the clock (a 60 s window starts at every whole minute), kept in
 * this process's memory: counting a request never waits for a database. On PostgreSQL, `shared-sync.ts` adds what the
 * other instances counted, in batches (see {@link WindowCounts.takePending} and {@link WindowCounts.applyShared}).
 */

/** What counting one request answers: the key's count in this window (this request included) and the ms left in it. */
export interface WindowHit {
  current: number;
  ttlMs: number;
}

/** One key's count in the current window. */
interface Entry {
  /** Requests counted here and not yet added to the shared count. */
  pending: number;
  /** The key's count over every instance as last read from the shared store (it includes what this one added). */
  shared: number;
  /** The key's id in the shared store (a keyed hash, never the address itself), made once per window when needed. */
  id?: string;
}

/** One key's count to add to the shared store, or a count read from it. */
export interface SharedCount {
  bucket: string;
  id: string;
  hits: number;
}

export interface WindowCountsOptions {
  /** Length of a window in ms. */
  windowMs: number;
  /** The clock in ms (tests inject one). */
  now: () => number;
  /** The id of a key in the shared store; identity when there is none (the embedded store counts in memory only). */
  idOf?: (bucket: string, key: string) => string;
  /** Keys kept per window at most; past it the oldest key is forgotten (a flood of new addresses cannot fill memory). */
  maxKeys?: number;
}

/** Keys a window holds at most by default (about 10 MB). */
export const MAX_KEYS_PER_WINDOW = 100_000;

export class WindowCounts {
  readonly windowMs: number;
  private readonly now: () => number;
  private readonly idOf: (bucket: string, key: string) => string;
  private readonly maxKeys: number;
  private windowStart = -1;
  /** Entries of the current window by bucket and key. */
  private entries = new Map<string, Entry>();
  /** Counts of keys near their limit that other instances reported and this one has not seen yet, by bucket and id. */
  private remoteHot = new Map<string, number>();

  constructor(options: WindowCountsOptions) {
    this.windowMs = options.windowMs;
    this.now = options.now;
    this.idOf = options.idOf ?? ((_bucket, key) => key);
    this.maxKeys = options.maxKeys ?? MAX_KEYS_PER_WINDOW;
  }

  /** Start (ms) of the window the clock is in now; a new window forgets the counts of the one before. */
  currentWindow(): number {
    const start = Math.floor(this.now() / this.windowMs) * this.windowMs;
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.entries = new Map();
      this.remoteHot = new Map();
    }
    return start;
  }

  /** Counts one request of `key` in `bucket`. */
  hit(bucket: string, key: string): WindowHit {
    const start = this.currentWindow();
    const name = `${bucket}\n${key}`;
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { pending: 0, shared: 0 };
      if (this.remoteHot.size > 0) {
        entry.id = this.idOf(bucket, key);
        entry.shared = this.remoteHot.get(`${bucket}\n${entry.id}`) ?? 0;
      }
      if (this.entries.size >= this.maxKeys) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(name, entry);
    }
    entry.pending += 1;
    // Never 0: a Retry-After of 0 seconds would invite the same request at once.
    return { current: entry.shared + entry.pending, ttlMs: Math.max(1, start + this.windowMs - this.now()) };
  }

  /**
   * The counts not yet shared, for one batch to the shared store, and the window they belong to. Each is taken off its
   * key's pending count; give them back with {@link WindowCounts.restorePending} when the batch failed.
   */
  takePending(): { windowStart: number; counts: SharedCount[] } {
    const windowStart = this.currentWindow();
    const counts: SharedCount[] = [];
    for (const [name, entry] of this.entries) {
      if (entry.pending === 0) continue;
      const bucket = name.slice(0, name.indexOf('\n'));
      entry.id ??= this.idOf(bucket, name.slice(bucket.length + 1));
      counts.push({ bucket, id: entry.id, hits: entry.pending });
      entry.pending = 0;
    }
    return { windowStart, counts };
  }

  /** Gives back counts a failed batch took, when their window is still the current one. */
  restorePending(windowStart: number, counts: readonly SharedCount[]): void {
    if (this.currentWindow() !== windowStart) return;
    const byId = this.entriesById();
    for (const count of counts) {
      const entry = byId.get(`${count.bucket}\n${count.id}`);
      if (entry) entry.pending += count.hits;
    }
  }

  /**
   * The shared store's counts after a batch: each key's total over every instance (what this one added included),
   * and keys near their limit that only other instances have seen so far.
   */
  applyShared(windowStart: number, totals: readonly SharedCount[]): void {
    if (this.currentWindow() !== windowStart) return;
    const byId = this.entriesById();
    for (const total of totals) {
      const name = `${total.bucket}\n${total.id}`;
      const entry = byId.get(name);
      if (entry) entry.shared = Math.max(entry.shared, total.hits);
      else this.remoteHot.set(name, total.hits);
    }
  }

  private entriesById(): Map<string, Entry> {
    const byId = new Map<string, Entry>();
    for (const [name, entry] of this.entries) {
      if (entry.id !== undefined) byId.set(`${name.slice(0, name.indexOf('\n'))}\n${entry.id}`, entry);
    }
    return byId;
  }
}
