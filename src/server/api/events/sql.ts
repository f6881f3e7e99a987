/** SQL that reads events (newest first, by the unique microsecond `sort_at`) with their per-destination actions. */
import type { Queryable } from '../../db/db';

/** An event row as read, with its `sort_at` as exact text (a JS Date would drop the microseconds the cursor needs). */
export interface EventRow {
  id: string;
  site_id: string;
  site_key: string;
  flow_id: string | null;
  flow_name: string | null;
  trigger: string | null;
  occurred_at: Date;
  status: string;
  match_quality: string | null;
  email: string | null;
  click_ids: Record<string, string> | null;
  data: Record<string, unknown>;
  /** numeric: text from the driver. */
  value: string | number | null;
  currency: string | null;
  customer_id: string | null;
  created_at: Date;
  /** sort_at in UTC with microseconds: `2026-11-21T09:30:00.123001Z`. */
  cursor: string;
}

export interface EventActionRow {
  id: string;
  event_id: string;
  destination: string;
  status: string;
  conversion_id: string | null;
  attempts: number;
  error: unknown;
  /** A summary of what was sent, without personal data (hashes, ids, kinds), and the platform's diagnostics. */
  request: Record<string, unknown> | null;
  delivered_at: Date | null;
}

/** Filters of the events list; timestamps are validated ISO 8601 strings, passed to SQL as written. */
export interface EventFilters {
  siteId?: string | undefined;
  flowId?: string | undefined;
  /** Lower-cased, as stored. */
  email?: string | undefined;
  status?: string | undefined;
  /** Only the events whose person was erased (the dashboard's "erased" status choice; not a REST filter). */
  erased?: boolean | undefined;
  occurredAfter?: string | undefined;
  occurredBefore?: string | undefined;
  /** Only events strictly older (by sort_at) than this timestamp cursor. */
  sortBefore?: string | undefined;
  /** Only events stored at or after this time (the identity window of the email and status filters). */
  storedSince?: Date | undefined;
}

const COLUMNS = `id, site_id, site_key, flow_id, flow_name, trigger, occurred_at, status, match_quality, email, click_ids, data,
  value, currency, customer_id, created_at, to_char(sort_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor`;

/** Up to `limit` events of an account matching the filters, newest first. */
export async function selectEvents(db: Queryable, accountId: string, filters: EventFilters, limit: number): Promise<EventRow[]> {
  const params: unknown[] = [accountId];
  const where = ['account_id = $1'];
  const add = (sql: (n: string) => string, value: unknown) => {
    if (value === undefined) return;
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  add((n) => `site_id = ${n}`, filters.siteId);
  add((n) => `flow_id = ${n}`, filters.flowId);
  add((n) => `email = ${n}`, filters.email);
  add((n) => `status = ${n}`, filters.status);
  // A failed event of an erased person was stopped on purpose (its actions: code `erased`): nothing to fix, not listed.
  if (filters.status === 'failed') where.push('erased_at is null');
  // Read along events_erased_sort (only the erased rows), so a page of them costs the same however few there are.
  if (filters.erased) where.push('erased_at is not null');
  // Each date bound also bounds sort_at (occurred_at's millisecond plus a tie-breaker under a millisecond, so implied:
  // no event is lost), which the account's index reads as a range; on occurred_at alone it read every event of the
  // account newer than the range (56 ms at 300,000 events on the embedded store for a range 60 days back, 0.5 ms so).
  add((n) => `occurred_at >= ${n}::timestamptz and sort_at >= date_trunc('milliseconds', ${n}::timestamptz)`, filters.occurredAfter);
  add((n) => `occurred_at <= ${n}::timestamptz and sort_at < date_trunc('milliseconds', ${n}::timestamptz) + interval '1 millisecond'`, filters.occurredBefore);
  add((n) => `sort_at < ${n}::timestamptz`, filters.sortBefore);
  add((n) => `created_at >= ${n}::timestamptz`, filters.storedSince);
  params.push(limit);
  return db.query<EventRow>(
    `select ${COLUMNS} from events where ${where.join(' and ')} order by sort_at desc limit $${params.length}`,
    params,
  );
}

/** One event of an account by id, or null. */
export async function findEvent(db: Queryable, accountId: string, id: string): Promise<EventRow | null> {
  const [row] = await db.query<EventRow>(`select ${COLUMNS} from events where account_id = $1 and id = $2`, [accountId, id]);
  return row ?? null;
}

/** The actions of some events, in each event's action order. */
export async function selectEventActions(db: Queryable, eventIds: readonly string[]): Promise<EventActionRow[]> {
  if (eventIds.length === 0) return [];
  return db.query<EventActionRow>(
    `select id, event_id, destination, status, conversion_id, attempts, error, request, delivered_at from event_actions
     where event_id = any($1::text[]) order by event_id, position`,
    [eventIds],
  );
}

/** One send of an event action, as delivery recorded it. */
export interface AttemptRow {
  event_action_id: string;
  attempt: number;
  at: Date;
  outcome: string;
  error: unknown;
  request: Record<string, unknown> | null;
}

/** Every recorded send of some event actions, oldest first. */
export async function selectAttempts(db: Queryable, actionIds: readonly string[]): Promise<AttemptRow[]> {
  if (actionIds.length === 0) return [];
  return db.query<AttemptRow>(
    `select event_action_id, attempt, at, outcome, error, request from delivery_attempts
     where event_action_id = any($1::text[]) order by event_action_id, id`,
    [actionIds],
  );
}

/** One adjustment of an event as the API shows it, with a result per destination. */
export interface AdjustmentView {
  event_id: string;
  adjustment_id: string;
  type: string;
  value: number | null;
  currency: string | null;
  occurred_at: string;
  created_at: string;
  /**
   * A restatement dated before the one its conversion stood at when it arrived, as stored (webhook/adjustment-sql.ts):
   * never sent, never the conversion's value. False for every adjustment recorded before migration 32.
   */
  superseded: boolean;
  results: Array<{ destination: string; status: string; reason: string | null }>;
}

/**
 * The adjustments of these events in the order they arrived (seq: the order they committed in), each with its results
 * in the order of the event's actions.
 */
export async function selectAdjustments(db: Queryable, eventIds: readonly string[]): Promise<AdjustmentView[]> {
  if (eventIds.length === 0) return [];
  const rows = await db.query<{
    event_id: string; id: string; adjustment_id: string; type: string; value: string | number | null; currency: string | null;
    occurred_at: Date; created_at: Date; superseded: boolean; destination: string; status: string; reason: string | null;
  }>(
    `select a.event_id, j.id, j.adjustment_id, j.type, j.value, j.currency, j.occurred_at, j.created_at, j.superseded, r.destination, r.status, r.reason
     from adjustment_results r
     join adjustments j on j.id = r.adjustment_id
     join event_actions a on a.id = r.event_action_id
     where a.event_id = any($1::text[])
     order by j.seq, a.position`,
    [eventIds],
  );
  const views = new Map<string, AdjustmentView>();
  for (const row of rows) {
    const key = `${row.event_id}\u0000${row.id}`;
    let view = views.get(key);
    if (!view) {
      view = {
        event_id: row.event_id,
        adjustment_id: row.adjustment_id,
        type: row.type,
        value: row.value === null ? null : Number(row.value),
        currency: row.currency,
        occurred_at: row.occurred_at.toISOString(),
        created_at: row.created_at.toISOString(),
        superseded: row.superseded,
        results: [],
      };
      views.set(key, view);
    }
    view.results.push({ destination: row.destination, status: row.status, reason: row.reason });
  }
  return [...views.values()];
}
