/**
 * Send-time pairing for delivery: an event whose snapshot was still pending when its report arrived is paired now if the
 * snapshot has come, held back while the pairing window is open, and released with identity only once it has closed.
 */
import type { Queryable } from '../db/db';
import { findSnapshot } from '../collector';
import { applyPairing } from './sql';
import { describeMatch, pairingDeadline, pairingWindowOpen, type Match } from './pairing';

/** The event fields send-time pairing needs (columns of `events`). */
export interface PairableEvent {
  id: string;
  site_id: string;
  match_quality: string | null;
  data: Record<string, unknown>;
  /** When the event (its report) was recorded: the pairing window runs from here. */
  created_at: Date;
}

/** `ready`: deliver now (with `match` when pairing just changed the event); otherwise retry at `retryAt`. */
export type Settlement = { ready: true; match: Match | null } | { ready: false; retryAt: Date };

/** Whether an event is still waiting for its snapshot. */
export function isPairingPending(event: Pick<PairableEvent, 'match_quality' | 'data'>): boolean {
  return event.match_quality === null && event.data.match_reason === 'snapshot_pending';
}

/** Settles an event's pairing at send time, in the delivery's transaction. */
export async function settlePairing(tx: Queryable, event: PairableEvent, now: Date = new Date()): Promise<Settlement> {
  if (!isPairingPending(event)) return { ready: true, match: null };
  const token = typeof event.data.correlation_token === 'string' ? event.data.correlation_token : null;
  const snapshot = token ? await findSnapshot(tx, event.site_id, token) : null;
  if (!snapshot && pairingWindowOpen(event.created_at, now)) return { ready: false, retryAt: pairingDeadline(event.created_at) };
  const match = describeMatch(snapshot, token, { windowClosed: true, now });
  await applyPairing(tx, event.id, match);
  return { ready: true, match };
}
