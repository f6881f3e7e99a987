/** SQL that records the pairing of reported events with snapshots and times their delivery around it. */
import type { Queryable } from './db';
import type { Match } from '../domain/pairing';

/**
 * Records a settled match on an event that was waiting for its snapshot: click ids, match quality and the data fields
 * (merged into `data`). Only an event still pending (match_quality null) changes; returns whether this one did.
 */
export async function applyPairing(tx: Queryable, eventId: string, match: Match): Promise<boolean> {
  const rows = await tx.query(
    `update events set click_ids = $2, match_quality = $3, data = data || $4::jsonb
     where id = $1 and match_quality is null returning id`,
    [eventId, match.clickIds ? JSON.stringify(match.clickIds) : null, match.matchQuality, JSON.stringify(match.data)],
  );
  return rows.length > 0;
}

/** Holds the delivery of freshly queued event actions until `dueAt` (a report waiting for its snapshot). */
export async function deferDelivery(tx: Queryable, eventActionIds: readonly string[], dueAt: Date): Promise<void> {
  if (eventActionIds.length === 0) return;
  await tx.query('update outbox set due_at = $2 where event_action_id = any($1::text[])', [eventActionIds, dueAt]);
}
