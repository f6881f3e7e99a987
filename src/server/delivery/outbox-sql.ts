/** SQL of the delivery outbox: pending event actions, claimed by the delivery worker. */
import type { Queryable } from '../db/db';

/** Queues event actions for delivery, each due at its own time, in one statement. */
export async function enqueueDeliveries(tx: Queryable, rows: ReadonlyArray<{ eventActionId: string; dueAt: Date }>): Promise<void> {
  if (rows.length === 0) return;
  await tx.query('insert into outbox (event_action_id, due_at) select * from unnest($1::text[], $2::timestamptz[])', [
    rows.map((r) => r.eventActionId),
    rows.map((r) => r.dueAt),
  ]);
}

/** An outbox row claimed by a worker. `lease` is the claim: only its holder may finish or reschedule the row. */
export interface ClaimedDelivery {
  id: number;
  eventActionId: string;
  /** Sends already made for this row. */
  attempts: number;
  lease: Date;
}

/**
 * Claims up to `limit` due rows (due_at <= now, not leased or lease expired) and leases them until now + leaseMs.
 * `for update skip locked` lets several service processes on one PostgreSQL claim concurrently without ever taking
 * the same row; a row whose lease expired (its worker crashed mid-send) is claimed again.
 */
export async function claimDeliveries(
  db: Queryable,
  options: { now: Date; leaseMs: number; limit: number },
): Promise<ClaimedDelivery[]> {
  const lease = new Date(options.now.getTime() + options.leaseMs);
  const rows = await db.query<{ id: number | string; event_action_id: string; attempts: number }>(
    `with due as (
       select id from outbox
       where due_at <= $1 and (locked_until is null or locked_until < $1)
       order by due_at, id
       limit $3
       for update skip locked
     )
     update outbox o set locked_until = $2
     from due where o.id = due.id
     returning o.id, o.event_action_id, o.attempts`,
    [options.now, lease, options.limit],
  );
  return rows.map((r) => ({ id: Number(r.id), eventActionId: r.event_action_id, attempts: Number(r.attempts), lease }));
}

/** Removes finished rows (delivered, failed for good, or gone) still held under their claims; returns the ids removed. */
export async function completeDeliveries(tx: Queryable, claims: readonly ClaimedDelivery[]): Promise<Set<number>> {
  if (claims.length === 0) return new Set();
  // Fenced by the lease: a row whose lease expired and was claimed again belongs to the other worker now.
  const rows = await tx.query<{ id: number | string }>(
    `delete from outbox o using unnest($1::bigint[], $2::timestamptz[]) as t(id, lease)
     where o.id = t.id and o.locked_until = t.lease returning o.id`,
    [claims.map((c) => c.id), claims.map((c) => c.lease)],
  );
  return new Set(rows.map((r) => Number(r.id)));
}

/** A claimed row to put back in the outbox. */
export interface Reschedule {
  claim: ClaimedDelivery;
  dueAt: Date;
  /** Adds one send to its attempts (not for a wait on pairing, nor for an interrupted send). */
  countAttempt: boolean;
  lastError?: string | null;
}

/** Puts claimed rows back, each due at its time and unleased; returns the ids still held (and so rescheduled). */
export async function rescheduleDeliveries(tx: Queryable, items: readonly Reschedule[]): Promise<Set<number>> {
  if (items.length === 0) return new Set();
  const rows = await tx.query<{ id: number | string }>(
    `update outbox o set due_at = t.due_at, locked_until = null, attempts = o.attempts + t.added,
       last_error = coalesce(t.last_error, o.last_error)
     from unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[], $4::int[], $5::text[]) as t(id, lease, due_at, added, last_error)
     where o.id = t.id and o.locked_until = t.lease returning o.id`,
    [
      items.map((i) => i.claim.id),
      items.map((i) => i.claim.lease),
      items.map((i) => i.dueAt),
      items.map((i) => (i.countAttempt ? 1 : 0)),
      items.map((i) => i.lastError ?? null),
    ],
  );
  return new Set(rows.map((r) => Number(r.id)));
}

/** Makes the waiting deliveries of an account's destination type due now (a new handoff connected it again). */
export async function resumeDeliveries(tx: Queryable, accountId: string, destinationType: string): Promise<number> {
  const rows = await tx.query(
    `update outbox o set due_at = now(), locked_until = null
     from event_actions a join events e on e.id = a.event_id
     where o.event_action_id = a.id and a.destination = $2 and e.account_id = $1 and a.status = 'queued'
     returning o.id`,
    [accountId, destinationType],
  );
  return rows.length;
}
