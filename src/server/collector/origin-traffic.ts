/**
 * The install check's record: for each site and page origin, the config requests and snapshots the collector served
 * and the requests it refused, with the reason. Counted in memory and written in one batch every few seconds, so the
 * collector's hot path gains no query; nothing personal is kept (an origin, a kind, a reason code).
 */
import type { Database } from '../db/db';
import { printable } from '../http/errors';
import type { SiteRow } from '../api/sites';
import { originAllowed } from './config';
import { addOriginTraffic, type OriginRefusalReason, type OriginTrafficKind, type OriginTrafficRow } from './origin-traffic-sql';

export type { OriginRefusalReason, OriginTrafficKind, OriginTrafficRow } from './origin-traffic-sql';
export { listOriginTraffic, ORIGIN_TRAFFIC_ROWS_PER_SITE } from './origin-traffic-sql';

/** Why a site refuses an origin (or null when it accepts it): the collector's own rule, as a code. */
export function refusalReasonOf(site: Pick<SiteRow, 'domain'>, origin: string | undefined): OriginRefusalReason | null {
  if (!origin) return 'no_origin';
  if (site.domain === null) return 'no_domain';
  return originAllowed(site, origin) ? null : 'not_covered';
}

export interface OriginTrafficOptions {
  /** How long counts wait in memory before they are written (default 2 s). */
  flushAfterMs?: number;
  /** Distinct keys held in memory at most; beyond that a write starts at once (default 1000). */
  maxPending?: number;
  /** Where a failed write is reported (never thrown into a collector request). */
  onError?: (error: unknown) => void;
}

type Pending = Omit<OriginTrafficRow, 'first_seen_at'>;

/** Counts what the collector did per (site, origin, kind, reason) and writes the counts in batches. */
export class OriginTraffic {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly flushAfterMs: number;
  private readonly maxPending: number;

  constructor(
    private readonly db: Database,
    private readonly options: OriginTrafficOptions = {},
  ) {
    this.flushAfterMs = options.flushAfterMs ?? 2_000;
    this.maxPending = options.maxPending ?? 1_000;
  }

  /**
   * A config request (a loader booting on a page): recorded, and recorded as refused when the site does not cover the
   * page. Anyone can send one with any Origin header, so the config request of a page the site does not cover carries
   * the refusal's reason: it is kept with the refusals (origin-traffic-sql.ts) and never pushes out the served pages.
   */
  config(site: SiteRow, origin: string | undefined): void {
    if (origin === undefined) return;
    const reason = refusalReasonOf(site, origin);
    this.add(site, origin, 'config', reason ?? '');
    if (reason) this.add(site, origin, 'refused', reason);
  }

  /** A snapshot or form submission the collector accepted. */
  served(site: SiteRow, origin: string | undefined, kind: 'snapshot' | 'form_submission'): void {
    this.add(site, origin ?? '', kind, '');
  }

  /** A request the collector refused because of its origin. */
  refused(site: SiteRow, origin: string | undefined): void {
    this.add(site, origin ?? '', 'refused', refusalReasonOf(site, origin) ?? 'not_covered');
  }

  /** Writes what is pending now. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    this.writing = this.writing.then(() =>
      addOriginTraffic(this.db, rows).catch((error: unknown) => this.options.onError?.(error)),
    );
    return this.writing;
  }

  private add(site: SiteRow, rawOrigin: string, kind: OriginTrafficKind, reason: OriginRefusalReason | ''): void {
    const origin = printable(rawOrigin, 200);
    const key = JSON.stringify([site.id, origin, kind, reason]);
    const now = new Date();
    const row = this.pending.get(key);
    if (row) {
      row.count += 1;
      row.last_seen_at = now;
      row.domain = site.domain;
    } else {
      this.pending.set(key, { site_id: site.id, origin, kind, reason, domain: site.domain, count: 1, last_seen_at: now });
    }
    if (this.pending.size >= this.maxPending) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushAfterMs);
      this.timer.unref();
    }
  }
}
