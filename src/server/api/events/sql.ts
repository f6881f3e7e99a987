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
  occurredAfter?: string | undefined;
  occurredBefore?: string | undefined;
  /** Only events strictly older (by sort_at) than this timestamp cursor. */
  sortBefore?: string | undefined;
  /** Only events stored at or after this time (the identity window of the email and status filters). */
  storedSince?: Date | undefined;
}

const COLUMNS = `id, site_id, site_key, flow_id, flow_name, trigger, occurred_at, status, match_quality, email, click_ids, data,
  created_at, to_char(sort_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor`;

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
  add((n) => `occurred_at >= ${n}::timestamptz`, filters.occurredAfter);
  add((n) => `occurred_at <= ${n}::timestamptz`, filters.occurredBefore);
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
