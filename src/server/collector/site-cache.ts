/**
 * Sites by public key, cached in memory for a few seconds: the collector's hot path must not query the sites table on
 * every snapshot. Per process, so a change made elsewhere is seen within the TTL at worst; callers that are about to
 * refuse a request (unknown key, foreign origin) re-read the row first, so a fresh domain never causes a wrong refusal.
 */
import type { Queryable } from '../db/db';
import { TtlCache } from '../db/ttl-cache';
import { findSiteByKey, type SiteRow } from '../api/sites';

/** How long a looked-up site is reused. */
export const SITE_CACHE_TTL_MS = 5_000;

/** A TTL cache of sites by site_key; concurrent misses of one key share one query. Unknown keys are never cached. */
export class SiteKeyCache {
  readonly #cache: TtlCache<string, SiteRow>;

  constructor(db: Queryable, ttlMs: number = SITE_CACHE_TTL_MS, clock: () => number = Date.now) {
    this.#cache = new TtlCache((siteKey) => findSiteByKey(db, siteKey), { ttlMs, clock });
  }

  /** The site with this key, from the cache while fresh. */
  get(siteKey: string): Promise<SiteRow | null> {
    return this.#cache.get(siteKey);
  }

  /** The site with this key read from the database now (and cached when it exists). */
  refresh(siteKey: string): Promise<SiteRow | null> {
    return this.#cache.refresh(siteKey);
  }
}
