/**
 * Sites by public key, cached in memory for a few seconds: the collector's hot path must not query the sites table on
 * every snapshot. Per process, so a change made elsewhere is seen within the TTL at worst; callers that are about to
 * refuse a request (unknown key, foreign origin) re-read the row first, so a fresh domain never causes a wrong refusal.
 */
import type { Queryable } from '../db/db';
import { findSiteByKey, type SiteRow } from '../api/sites';

/** How long a looked-up site is reused. */
export const SITE_CACHE_TTL_MS = 5_000;

/** Beyond this many entries the cache starts over (a crude bound against floods of distinct keys). */
const MAX_ENTRIES = 10_000;

interface Entry {
  site: Promise<SiteRow | null>;
  until: number;
}

/** A TTL cache of sites by site_key; concurrent misses of one key share one query. Unknown keys are never cached. */
export class SiteKeyCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs: number = SITE_CACHE_TTL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The site with this key, from the cache while fresh. */
  get(siteKey: string): Promise<SiteRow | null> {
    const entry = this.#entries.get(siteKey);
    if (entry && entry.until > this.clock()) return entry.site;
    return this.refresh(siteKey);
  }

  /** The site with this key read from the database now (and cached when it exists). */
  refresh(siteKey: string): Promise<SiteRow | null> {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    const site = findSiteByKey(this.db, siteKey);
    const entry: Entry = { site, until: this.clock() + this.ttlMs };
    this.#entries.set(siteKey, entry);
    site.then(
      (row) => {
        if (!row && this.#entries.get(siteKey) === entry) this.#entries.delete(siteKey);
      },
      () => {
        if (this.#entries.get(siteKey) === entry) this.#entries.delete(siteKey);
      },
    );
    return site;
  }
}
