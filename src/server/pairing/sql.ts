/** SQL that pairs reported events with snapshots: the snapshots a batch of reports needs, and late pairings recorded. */
import { compositeKey } from '../db/composite-key';
import type { Queryable } from '../db/db';
import type { Match } from './pairing';
import { snapshotColumns, type SnapshotRow } from '../collector';

/**
 * Records a settled match on an event that was waiting for its snapshot: click ids, match quality and the data fields
 * (merged into `data`). Only an event still pending (match_quality null) changes; returns whether this one did. An
 * erased event never does: delivery may have read it before the erasure, and a snapshot of its browser's token that
 * arrived after the erasure (a new row, as any new visit) must not put the click, pages and cookies back on it.
 */
export async function applyPairing(tx: Queryable, eventId: string, match: Match): Promise<boolean> {
  const rows = await tx.query(
    `update events set click_ids = $2, match_quality = $3, data = data || $4::jsonb
     where id = $1 and match_quality is null and erased_at is null returning id`,
    [eventId, match.clickIds ? JSON.stringify(match.clickIds) : null, match.matchQuality, JSON.stringify(match.data)],
  );
  return rows.length > 0;
}

/** The key of a snapshot in findSnapshots' answer: (site, correlation token), as one string. */
export function snapshotKey(siteId: string, correlationToken: string): string {
  return compositeKey(siteId, correlationToken);
}

/**
 * A stored snapshot as a report's planning reads it: the row, and its id (text), by which the report's write checks
 * that it is still there (an erasure deletes it: see ReportWithEvents.basis).
 */
export type StoredSnapshot = SnapshotRow & { id: string };

/** The stored snapshots of several (site, correlation token) pairs in one read, by snapshotKey; missing ones are absent. */
export async function findSnapshots(
  db: Queryable,
  keys: ReadonlyArray<{ siteId: string; correlationToken: string }>,
): Promise<Map<string, StoredSnapshot>> {
  if (keys.length === 0) return new Map();
  const rows = await db.query<StoredSnapshot>(
    `select s.id::text as id, ${snapshotColumns('s')}
     from snapshots s join unnest($1::text[], $2::text[]) as k(site_id, correlation_token)
       on s.site_id = k.site_id and s.correlation_token = k.correlation_token`,
    [keys.map((k) => k.siteId), keys.map((k) => k.correlationToken)],
  );
  return new Map(rows.map((row) => [snapshotKey(row.site_id, row.correlation_token), row]));
}
