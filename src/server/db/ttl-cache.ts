/**
 * A small in-memory cache of rows read by key, each reused for a few seconds: what keeps a hot path (the collector's
 * site lookup, the webhook's secrets) from querying on every request. Per process, so a change made elsewhere is seen
 * within the TTL at worst; a caller about to refuse something re-reads first (`refresh`), so only a positive answer is
 * ever served stale.
 */

export interface TtlCacheOptions {
  /** How long a loaded value is reused, in ms. */
  ttlMs: number;
  /** Beyond this many keys the cache starts over (a crude bound against floods of distinct keys). */
  maxEntries?: number;
  /** The clock in ms; tests inject their own. */
  clock?: () => number;
  /**
   * Stale-while-revalidate for slow loads: once its TTL has passed, a value whose load took at least `ifLoadTookMs`
   * is still answered for up to `forMs` more while one load runs in the background, so nobody waits for a read that
   * is slow and was made a moment ago. A value that loaded faster is loaded again before it is answered, as without
   * this option. Absent: never served stale.
   */
  serveStale?: { forMs: number; ifLoadTookMs: number };
}

interface Entry<V> {
  value: Promise<V | null>;
  until: number;
  /** The loaded value and how long its load took, once it has loaded (a value never null). */
  loaded?: { value: V; tookMs: number };
  /** Whether a background load of this entry's key runs (serveStale). */
  reloading?: boolean;
}

/**
 * Values by key, loaded by `load`. Concurrent misses of one key share one load. An absent value (null) and a failed
 * load are never cached, so a row created a moment ago is found at the next read.
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #clock: () => number;
  readonly #serveStale: TtlCacheOptions['serveStale'];

  constructor(
    private readonly load: (key: K) => Promise<V | null>,
    options: TtlCacheOptions,
  ) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#clock = options.clock ?? Date.now;
    this.#serveStale = options.serveStale;
  }

  /** The value of `key` while it is fresh in the cache, else null (without loading). */
  cached(key: K): Promise<V | null> | null {
    const entry = this.#entries.get(key);
    return entry && entry.until > this.#clock() ? entry.value : null;
  }

  /** The value of `key`: from the cache while fresh (or stale within `serveStale`, reloading it meanwhile), else loaded now. */
  get(key: K): Promise<V | null> {
    const fresh = this.cached(key);
    if (fresh) return fresh;
    const stale = this.#staleOf(key);
    if (!stale) return this.refresh(key);
    if (!stale.reloading) this.#reloadInBackground(key, stale);
    return Promise.resolve(stale.loaded!.value);
  }

  /** The value of `key` loaded now (and cached when it exists). */
  refresh(key: K): Promise<V | null> {
    return this.#load(key).value;
  }

  /** The entry of `key` if it may be answered stale now (see serveStale). */
  #staleOf(key: K): Entry<V> | undefined {
    const entry = this.#entries.get(key);
    const rule = this.#serveStale;
    if (!entry?.loaded || !rule) return undefined;
    return entry.loaded.tookMs >= rule.ifLoadTookMs && this.#clock() < entry.until + rule.forMs ? entry : undefined;
  }

  /**
   * Loads `key` while its stale entry is still answered; the new value replaces it once loaded (unless something newer
   * did meanwhile). An absent value forgets the key; a failed load leaves the stale entry for the next `get` to retry.
   */
  #reloadInBackground(key: K, stale: Entry<V>): void {
    stale.reloading = true;
    const entry = this.#load(key, stale);
    entry.value.catch(() => {
      stale.reloading = false;
    });
  }

  /** Starts a load of `key` and caches it as `key`'s entry, at once or (with `replacing`) once it has loaded. */
  #load(key: K, replacing?: Entry<V>): Entry<V> {
    if (!replacing && this.#entries.size >= this.#maxEntries) this.#entries.clear();
    const started = this.#clock();
    const value = this.load(key);
    const entry: Entry<V> = { value, until: started + this.#ttlMs };
    if (!replacing) this.#entries.set(key, entry);
    const current = () => this.#entries.get(key) === (replacing ?? entry);
    const forget = () => {
      if (current()) this.#entries.delete(key);
    };
    value.then(
      (found) => {
        if (found === null) return forget();
        const tookMs = this.#clock() - started;
        entry.loaded = { value: found, tookMs };
        if (replacing && current()) this.#entries.set(key, entry);
      },
      replacing ? () => undefined : forget,
    );
    return entry;
  }
}
