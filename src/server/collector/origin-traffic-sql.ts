/** SQL of the install check: per site and page origin, what the collector served or refused, counted, bounded per site. */
import type { Queryable } from '../db/db';

/** What the collector did for a page origin: served its config, a snapshot, a form submission, or refused it. */
export type OriginTrafficKind = 'config' | 'snapshot' | 'form_submission' | 'refused';

/** Why a request was refused: no Origin header, no domain set on the site, or an origin the domain does not cover. */
export type OriginRefusalReason = 'no_origin' | 'no_domain' | 'not_covered';

/** One (site, origin, kind, reason) and how often it happened since `first_seen_at`. */
export interface OriginTrafficRow {
  site_id: string;
  /** The request's Origin header (printable, cut to 200 characters), or '' when there was none. */
  origin: string;
  kind: OriginTrafficKind;
  /**
   * '' for requests served to a page the site covered; the refusal's reason for a refusal, and for a config request
   * of a page the site did not cover (answered, as every config request is, but anyone can send one).
   */
  reason: OriginRefusalReason | '';
  /** The site's domain when it happened (a refusal's reason depends on it). */
  domain: string | null;
  count: number;
  first_seen_at: Date;
  last_seen_at: Date;
}

/**
 * Rows kept per site, the most recently seen, counted apart for the requests served to pages the site covered, the
 * config requests of pages it did not cover, and the refusals: older ones are deleted on the next write. Apart, so that
 * what anyone can cause with any Origin header (a refusal, a config request from a page the site does not cover) never
 * pushes out the record of the pages that were served.
 */
export const ORIGIN_TRAFFIC_ROWS_PER_SITE = 50;

/** Adds counts to the rows of a batch (one row per distinct key), then trims each site touched to its newest rows. */
export async function addOriginTraffic(
  db: Queryable,
  rows: ReadonlyArray<Omit<OriginTrafficRow, 'first_seen_at'>>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into collector_origins (site_id, origin, kind, reason, domain, count, first_seen_at, last_seen_at)
     select site_id, origin, kind, reason, domain, count, seen, seen
     from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[])
       as t(site_id, origin, kind, reason, domain, count, seen)
     on conflict (site_id, origin, kind, reason) do update set
       count = collector_origins.count + excluded.count,
       domain = excluded.domain,
       last_seen_at = greatest(collector_origins.last_seen_at, excluded.last_seen_at)`,
    [
      rows.map((r) => r.site_id),
      rows.map((r) => r.origin),
      rows.map((r) => r.kind),
      rows.map((r) => r.reason),
      rows.map((r) => r.domain),
      rows.map((r) => r.count),
      rows.map((r) => r.last_seen_at),
    ],
  );
  await db.query(
    `delete from collector_origins where (site_id, origin, kind, reason) in (
       select site_id, origin, kind, reason from (
         select site_id, origin, kind, reason,
           row_number() over (partition by site_id, kind = 'refused', reason = '' order by last_seen_at desc) as n
         from collector_origins where site_id = any($1::text[])
       ) ranked where n > $2)`,
    [[...new Set(rows.map((r) => r.site_id))], ORIGIN_TRAFFIC_ROWS_PER_SITE],
  );
}

/** What the collector saw of a site's page origins, most recent first. */
export async function listOriginTraffic(db: Queryable, siteId: string): Promise<OriginTrafficRow[]> {
  const rows = await db.query<OriginTrafficRow>(
    `select site_id, origin, kind, reason, domain, count, first_seen_at, last_seen_at
     from collector_origins where site_id = $1 order by last_seen_at desc, origin, kind`,
    [siteId],
  );
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}
