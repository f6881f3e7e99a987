/**
 * SQL of outbound notifications: an account's endpoints (secret sealed), the outbox of messages (one row per endpoint
 * and message, written in the transaction of what it tells, so a restart or a kill loses none), and every attempt.
 */
import type { Database, Queryable } from '../db/db';
import { newId } from '../db/ids';
import { selectPageBySeq } from '../db/keyset';
import type { PageRequest, PageResult } from '../http/pagination';
import type { NotificationData, NotificationKind, NotificationPayload } from './kinds';

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  kinds: string[];
  created_at: Date;
}

const ENDPOINT_COLUMNS = 'id, account_id, url, kinds, created_at';

export async function insertEndpoint(db: Queryable, accountId: string, url: string, kinds: readonly string[], sealedSecret: string): Promise<EndpointRow> {
  const [row] = await db.query<EndpointRow>(
    `insert into notification_endpoints (id, account_id, url, kinds, secret) values ($1, $2, $3, $4, $5) returning ${ENDPOINT_COLUMNS}`,
    [newId('nep'), accountId, url, kinds, sealedSecret],
  );
  return row!;
}

export async function listEndpointsPage(db: Queryable, accountId: string, request: PageRequest): Promise<PageResult<EndpointRow>> {
  return selectPageBySeq<EndpointRow>(db, { table: 'notification_endpoints', columns: ENDPOINT_COLUMNS, accountId }, request);
}

export async function findEndpoint(db: Queryable, accountId: string, id: string): Promise<EndpointRow | null> {
  const [row] = await db.query<EndpointRow>(`select ${ENDPOINT_COLUMNS} from notification_endpoints where account_id = $1 and id = $2`, [accountId, id]);
  return row ?? null;
}

/** Deletes an endpoint with its pending messages and attempts; false when the account has none with that id. */
export async function deleteEndpoint(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const rows = await db.query('delete from notification_endpoints where account_id = $1 and id = $2 returning id', [accountId, id]);
  return rows.length > 0;
}

/**
 * Queues a notification for every endpoint of the account subscribed to its kind, in the caller's transaction; returns
 * how many messages were queued. The payload is fixed now, so every retry sends the same body and webhook-id.
 */
export async function enqueueNotification(
  tx: Queryable,
  accountId: string,
  kind: NotificationKind,
  data: NotificationData,
  at: Date = new Date(),
): Promise<number> {
  const payload: NotificationPayload = { type: kind, timestamp: at.toISOString(), data };
  const rows = await tx.query(
    `insert into notifications (message_id, endpoint_id, account_id, kind, payload, due_at)
     select 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, e.account_id, $2, $3, now()
     from notification_endpoints e where e.account_id = $1 and $2 = any(e.kinds)
     returning id`,
    [accountId, kind, JSON.stringify(payload)],
  );
  return rows.length;
}

/** Queues a destination kind for the account that owns the connection, in the caller's transaction. */
export async function enqueueDestinationNotification(
  tx: Queryable,
  destinationId: string,
  kind: 'destination.reauthorization_required' | 'destination.recovered',
  reason: string,
): Promise<number> {
  const [row] = await tx.query<{ account_id: string; type: string }>('select account_id, type from destinations where id = $1', [destinationId]);
  if (!row) return 0;
  return enqueueNotification(tx, row.account_id, kind, { site_id: null, destination: { id: destinationId, type: row.type }, reason });
}

/** A queued message claimed by a worker, with what sending it needs. */
export interface ClaimedNotification {
  id: number;
  messageId: string;
  url: string;
  sealedSecret: string;
  payload: string;
  attempts: number;
  lease: Date;
}

/**
 * Claims due messages under a lease (`for update skip locked`: several processes never take the same one), the
 * endpoints in turn: every endpoint's oldest due message before any endpoint's second, and each endpoint's messages
 * oldest first. A round lasts as long as its slowest receiver (10 s for one that hangs), so taking the oldest due
 * messages of the whole table first let one endpoint's backlog (a storm of `event.failed` to a receiver that is down)
 * hold back every other account's notifications, wave after wave of retries.
 */
export async function claimNotifications(db: Queryable, options: { now: Date; leaseMs: number; limit: number }): Promise<ClaimedNotification[]> {
  const lease = new Date(options.now.getTime() + options.leaseMs);
  // The claimed ids as an array, not joined: as delivery's claims (claimDeliveries), a join hashed the whole queue.
  // The turns are counted over the due messages (the partial index notifications_due), then the chosen ones are
  // locked, their state checked again under the lock.
  const rows = await db.query<{ id: string | number; message_id: string; url: string; secret: string; payload: unknown; attempts: number }>(
    `with due as (
       select id from notifications
       where id = any(array(
           select id from (
             select id, due_at, row_number() over (partition by endpoint_id order by due_at, id) as turn
             from notifications
             where status = 'pending' and due_at <= $1 and (locked_until is null or locked_until < $1)
           ) queued
           order by turn, due_at, id limit $3))
         and status = 'pending' and due_at <= $1 and (locked_until is null or locked_until < $1)
       for update skip locked
     )
     update notifications n set locked_until = $2
     from notification_endpoints e
     where n.id = any(array(select id from due)) and e.id = n.endpoint_id
     returning n.id, n.message_id, e.url, e.secret, n.payload, n.attempts`,
    [options.now, lease, options.limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    messageId: r.message_id,
    url: r.url,
    sealedSecret: r.secret,
    payload: typeof r.payload === 'string' ? r.payload : JSON.stringify(r.payload),
    attempts: Number(r.attempts),
    lease,
  }));
}

/** What one attempt came to. */
export interface AttemptOutcome {
  /** HTTP status of the answer, or null when none came (timeout, network error). */
  status: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Records an attempt and the message's new state (delivered, failed for good, or pending again at `retryAt`), fenced
 * by the lease. False when the lease was lost (another worker owns the message now).
 */
export async function recordNotificationAttempt(
  db: Database,
  claim: ClaimedNotification,
  outcome: AttemptOutcome,
  next: { status: 'delivered' | 'failed' } | { status: 'pending'; retryAt: Date },
  at: Date,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const updated = await tx.query(
      `update notifications set status = $3, attempts = attempts + 1, locked_until = null, due_at = coalesce($4, due_at),
         delivered_at = case when $3 = 'delivered' then $5::timestamptz else delivered_at end
       where id = $1 and locked_until = $2 returning id`,
      [claim.id, claim.lease, next.status, next.status === 'pending' ? next.retryAt : null, at],
    );
    if (updated.length === 0) return false;
    await tx.query(
      `insert into notification_attempts (notification_id, attempt, at, status, error, duration_ms) values ($1, $2, $3, $4, $5, $6)`,
      [claim.id, claim.attempts + 1, at, outcome.status, outcome.error, outcome.durationMs],
    );
    return true;
  });
}

/** A message as the dashboard shows it, with its attempts. */
export interface NotificationRecord {
  id: number;
  message_id: string;
  endpoint_id: string;
  kind: string;
  status: string;
  attempts: number;
  due_at: Date;
  created_at: Date;
  delivered_at: Date | null;
  history: Array<{ attempt: number; at: string; status: number | null; error: string | null; duration_ms: number }>;
  /** The payload's `data`: what the notification is about (the reason, the event, the destination). */
  data: NotificationData | null;
}

/** The account's latest messages, newest first, with every attempt. */
export async function recentNotifications(db: Queryable, accountId: string, limit = 50): Promise<NotificationRecord[]> {
  return db.query<NotificationRecord>(
    `select n.id, n.message_id, n.endpoint_id, n.kind, n.status, n.attempts, n.due_at, n.created_at, n.delivered_at,
            n.payload -> 'data' as data,
            coalesce((select json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'status', a.status, 'error', a.error,
                       'duration_ms', a.duration_ms) order by a.attempt) from notification_attempts a where a.notification_id = n.id), '[]'::json) as history
     from notifications n where n.account_id = $1 order by n.created_at desc, n.id desc limit $2`,
    [accountId, limit],
  );
}
