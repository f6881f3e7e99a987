/**
 * Pairing a webhook report with the loader's snapshot: what a snapshot (or its absence) means for an event's click ids,
 * match quality and data. Pure: the webhook uses it when the report arrives, delivery when a late snapshot is settled.
 */
import type { SnapshotRow } from '../collector';

/** A snapshot that arrives up to this long after its report is still paired before delivery. */
export const PAIRING_WINDOW_MS = 10_000;

/** `high`: a click id; `medium`: a snapshot without click ids; `low`: identity fields only. */
export type MatchQuality = 'high' | 'medium' | 'low';

/** Why an event has the match it has; stored as `data.match_reason`. */
export type MatchReason =
  /** The report's token found its snapshot. */
  | 'paired'
  /** The report has a token, its snapshot has not arrived yet: delivery waits for it (PAIRING_WINDOW_MS). */
  | 'snapshot_pending'
  /** The pairing window closed without a snapshot: delivered with the identity fields only. */
  | 'snapshot_missing'
  /** The report came without a token (allow_uncorrelated): identity fields only. */
  | 'no_correlation_token';

/** What pairing decided for an event. */
export interface Match {
  /** null while the snapshot is pending: the event is not ready for delivery. */
  matchQuality: MatchQuality | null;
  reason: MatchReason;
  /** The touch's click ids (lower-case keys), or null without any. */
  clickIds: Record<string, string> | null;
  /** When the signup intent happened in the browser, when paired (never in the future of `now`). */
  occurredAt: Date | null;
  /** Fields merged into the event's `data`. */
  data: Record<string, unknown>;
  /**
   * The snapshot paired with, or null: what delivery passes on beyond the click ids (`user_agent`, `ip_address`,
   * `page_url`, `cookies`, `consent`, `touch.captured_at`). The user agent and IP address are never copied into `data`:
   * they stay in the snapshot, which retention deletes.
   */
  snapshot: SnapshotRow | null;
}

export interface DescribeMatchOptions {
  /** True once the pairing window has closed: a missing snapshot is then final, not pending. */
  windowClosed?: boolean;
  /** The clock, for capping a browser's future occurred_at. */
  now?: Date;
}

/** The match of a report (with or without a token) given the snapshot found for its token (or null). */
export function describeMatch(
  snapshot: SnapshotRow | null,
  correlationToken: string | null,
  options: DescribeMatchOptions = {},
): Match {
  if (!correlationToken) {
    return {
      matchQuality: 'low', reason: 'no_correlation_token', clickIds: null, occurredAt: null,
      data: { match_reason: 'no_correlation_token' }, snapshot: null,
    };
  }
  if (!snapshot) {
    const reason: MatchReason = options.windowClosed ? 'snapshot_missing' : 'snapshot_pending';
    return {
      matchQuality: options.windowClosed ? 'low' : null,
      reason,
      clickIds: null,
      occurredAt: null,
      data: { match_reason: reason, correlation_token: correlationToken },
      snapshot: null,
    };
  }
  const touch = snapshot.touch;
  const clickIds = touch && Object.keys(touch.click_ids).length > 0 ? { ...touch.click_ids } as Record<string, string> : null;
  const now = options.now ?? new Date();
  // A browser clock ahead of ours must not date a conversion in the future (ad platforms reject those).
  const occurredAt = snapshot.occurred_at.getTime() > now.getTime() ? now : snapshot.occurred_at;
  const data: Record<string, unknown> = {
    match_reason: 'paired',
    correlation_token: correlationToken,
    page_url: snapshot.page_url,
    utm: touch?.utm ?? {},
    landing_page_url: touch?.landing_page_url ?? null,
    landing_referrer: touch?.referrer ?? null,
    touch_captured_at: touch?.captured_at ?? null,
    snapshot_occurred_at: snapshot.occurred_at.toISOString(),
  };
  if (Object.keys(snapshot.cookies).length > 0) data.platform_cookies = { ...snapshot.cookies };
  // The visitor's consent is kept with the conversion: the snapshot goes at its retention, and a conversion sent later
  // (one that waited for a reconnect, or sent again after a fix) must still hold back what the visitor refused.
  if (snapshot.consent) data.consent = { ...snapshot.consent };
  // Click ids of touches that were not delivered (a second click before the signup): shown on the event, not sent.
  if (receivedMore(snapshot.received_click_ids, clickIds)) data.received_click_ids = snapshot.received_click_ids;
  return { matchQuality: clickIds ? 'high' : 'medium', reason: 'paired', clickIds, occurredAt, data, snapshot };
}

/** Whether the token received a click id beyond those of the delivered touch. */
function receivedMore(received: Record<string, string[]> | undefined, delivered: Record<string, string> | null): boolean {
  return Object.entries(received ?? {}).some(([key, values]) => values.some((value) => delivered?.[key] !== value));
}

/** Whether a report made at `reportedAt` may still wait for its snapshot at `now`. */
export function pairingWindowOpen(reportedAt: Date, now: Date = new Date()): boolean {
  return now.getTime() - reportedAt.getTime() < PAIRING_WINDOW_MS;
}

/** When delivery of a report's events should happen at the latest if its snapshot never arrives. */
export function pairingDeadline(reportedAt: Date): Date {
  return new Date(reportedAt.getTime() + PAIRING_WINDOW_MS);
}
