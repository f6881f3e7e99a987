/**
 * The loader's config of a site by site key, kept in memory for SITE_CONFIG_TTL_MS: what `/loader.js?site_key=…` (the
 * install snippet, fetched on every page view a browser or CDN has not cached) and the config endpoint put in their
 * answers. Read from the store on every request, they cost two statements each: on the embedded store (2 cores) the
 * per-site loader answered about 2,100 requests a second against 28,000 for the plain one, and the config endpoint
 * 2,300, so a busy customer's page views without a CDN took the store's time from the snapshots and reports; an
 * unknown key (a snippet of a deleted or mistyped site on a popular page) was one statement a request too.
 *
 * A change made through this process (a site's domain or settings, a flow's form trigger published or changed) is in
 * the next answer: the sites and flows SQL note their writes (db/table-changes.ts), a kept config older than a noted
 * write is read again, and a read that overlapped a write is used but not kept. A change made by another process (the
 * other instances on PostgreSQL; `cnv` while the service runs on PostgreSQL) is seen within SITE_CONFIG_TTL_MS, beside
 * the minute browsers keep the loader (its Cache-Control). Unknown keys are kept too (a new site's key is new, so no
 * site can be missed), within a bound on the keys kept.
 */
import type { Queryable } from '../db/db';
import { tableChanges } from '../db/table-changes';
import { findSiteByKey, type SiteRow } from '../api/sites';
import { loadSiteConfig, type LoaderConfig } from './config';

/** How long a site's config, or a key's absence, is reused. */
export const SITE_CONFIG_TTL_MS = 5_000;

/** Beyond this many kept keys the cache starts over (a flood of made-up keys cannot fill memory). */
export const MAX_KEPT_SITE_CONFIGS = 10_000;

/** A site and its loader config. */
export interface SiteWithConfig {
  site: SiteRow;
  config: LoaderConfig;
}

interface Kept {
  found: SiteWithConfig | null;
  until: number;
  /** The writes to sites and flows this process had noted when it was read. */
  changes: string;
}

/** The writes to what a config is read from, as this process noted them. */
const changesNow = (): string => `${tableChanges('sites')}/${tableChanges('flows')}`;

export class SiteConfigs {
  readonly #db: Queryable;
  readonly #now: () => number;
  readonly #kept = new Map<string, Kept>();
  /** Reads under way, by noted changes and key: concurrent misses share one read, never one begun before a write. */
  readonly #reading = new Map<string, Promise<SiteWithConfig | null>>();

  constructor(db: Queryable, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /** The site with this key and its config, or null for a key that names no site. */
  get(siteKey: string): Promise<SiteWithConfig | null> {
    const changes = changesNow();
    const kept = this.#kept.get(siteKey);
    if (kept && kept.changes === changes && kept.until > this.#now()) return Promise.resolve(kept.found);
    const readKey = `${changes}\n${siteKey}`;
    let reading = this.#reading.get(readKey);
    if (!reading) {
      reading = this.#read(siteKey, changes).finally(() => this.#reading.delete(readKey));
      this.#reading.set(readKey, reading);
    }
    return reading;
  }

  async #read(siteKey: string, changes: string): Promise<SiteWithConfig | null> {
    const site = await findSiteByKey(this.#db, siteKey);
    const found = site && { site, config: await loadSiteConfig(this.#db, site) };
    // Kept only when no write to sites or flows began or ended while this read was under way.
    if (changesNow() === changes) {
      if (this.#kept.size >= MAX_KEPT_SITE_CONFIGS) this.#kept.clear();
      this.#kept.set(siteKey, { found, until: this.#now() + SITE_CONFIG_TTL_MS, changes });
    }
    return found;
  }
}
