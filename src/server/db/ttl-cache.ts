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
}

interface Entry<V> {
  value: Promise<V | null>;
  until: number;
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

  constructor(
    private readonly load: (key: K) => Promise<V | null>,
    options: TtlCacheOptions,
  ) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#clock = options.clock ?? Date.now;
  }

  /** The value of `key` while it is fresh in the cache, else null (without loading). */
  cached(key: K): Promise<V | null> | null {
    const entry = this.#entries.get(key);
    return entry && entry.until > this.#clock() ? entry.value : null;
  }

  /** The value of `key`: from the cache while fresh, else loaded now. */
  get(key: K): Promise<V | null> {
    return this.cached(key) ?? this.refresh(key);
  }

  /** The value of `key` loaded now (and cached when it exists). */
  refresh(key: K): Promise<V | null> {
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    const value = this.load(key);
    const entry: Entry<V> = { value, until: this.#clock() + this.#ttlMs };
    this.#entries.set(key, entry);
    const forget = () => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    };
    value.then((found) => (found === null ? forget() : undefined), forget);
    return value;
  }
}
