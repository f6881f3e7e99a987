/** SQL of the delivery outbox: pending event actions, claimed by the delivery worker. */
import type { Queryable } from '../db/db';
import { eventStatusAggregate, type ActionResult } from './sql';
import { withoutHashes } from '../privacy';

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
  // The claimed ids go to the update as an array, not joined: the plan a prepared statement settles on took `limit $3`
  // for a tenth of the outbox and joined it by a hash of the whole queue, every round of a backlog (7 to 9 ms a claim
  // with 51,000 rows waiting on the embedded store, 1.8 to 2.4 ms so).
  const rows = await db.query<{ id: number | string; event_action_id: string; attempts: number }>(
    `with due as (
       select id from outbox
       where due_at <= $1 and (locked_until is null or locked_until < $1)
       order by due_at, id
       limit $3
       for update skip locked
     )
     update outbox o set locked_until = $2
     where o.id = any(array(select id from due))
     returning o.id, o.event_action_id, o.attempts`,
    [options.now, lease, options.limit],
  );
  return rows.map((r) => ({ id: Number(r.id), eventActionId: r.event_action_id, attempts: Number(r.attempts), lease }));
}

/** A claimed row to put back in the outbox. */
export interface Reschedule {
  claim: ClaimedDelivery;
  dueAt: Date;
  /** Adds one send to its attempts (not for a wait on pairing, nor for an interrupted send). */
  countAttempt: boolean;
  lastError?: string | null;
}

/** A claimed row's fate as the round writes it: finished or rescheduled, with its action's new state (if any). */
export interface RowOutcome {
  claim: ClaimedDelivery;
  /** Finished: the row leaves the outbox. */
  finish: boolean;
  /** Not finished: when it is due again. */
  reschedule: Omit<Reschedule, 'claim'> | null;
  action: ActionResult | null;
  /** The result records a send: one more delivery_attempts row. */
  countsAttempt: boolean;
}

/** The `last_error` of an outbox row that waits for its connection to be authorized again (see resumeDeliveries). */
export const REAUTHORIZATION_WAIT = 'reauthorization_required';

/**
 * The `last_error` of an outbox row that waits for the service's own OAuth client of its platform to be accepted again
 * (`oauth_client_refused`: the operator's settings; see resumeOAuthClientWaits).
 */
export const OAUTH_CLIENT_WAIT = 'oauth_client_refused';

/**
 * Makes every conversion and adjustment that waits for a platform's OAuth client due now, and forgets the refusals
 * recorded (destinations/client-refusals.ts): run as a worker starts, since the client is an operator's setting that
 * only a start can change. Rows a worker of another process holds are left to it. Returns how many of both.
 */
export async function resumeOAuthClientWaits(tx: Queryable): Promise<number> {
  const rows = await tx.query(
    'update outbox set due_at = now() where last_error = $1 and (locked_until is null or locked_until < now()) returning id',
    [OAUTH_CLIENT_WAIT],
  );
  const adjustments = await tx.query(
    `update adjustment_results set due_at = now()
     where status = 'queued' and error->>'code' = $1 and (locked_until is null or locked_until < now()) returning id`,
    [OAUTH_CLIENT_WAIT],
  );
  return rows.length + adjustments.length;
}

/**
 * Locks (for share) the connections of the outbox rows `ids` until the transaction ends, waiting for a reconnect (or a
 * recovery) in progress to commit: a statement after this sees whether each is connected now, and a reconnect after
 * it waits for this transaction, whose rows are no longer held when its resumeDeliveries looks at them.
 */
async function lockConnectionsOfRows(tx: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `select d.id from outbox o join event_actions a on a.id = o.event_action_id join events e on e.id = a.event_id
     join destinations d on d.account_id = e.account_id and d.type = a.destination
     where o.id = any($1::bigint[]) order by d.id for share of d`,
    [ids],
  );
}

/**
 * The claims of `claims` still held, of events not erased: read just before a batch is sent. A round reads its rows'
 * events (identity, click) when it starts, and sends a connection's batches one after another, each after the token it
 * needs; an erasure that commits meanwhile deletes the outbox rows of the person's events, and what it erased must not
 * then go out from that earlier read. (A send already on its way when the erasure commits cannot be called back.)
 */
export async function claimsStillHeld(db: Queryable, claims: readonly ClaimedDelivery[]): Promise<Set<number>> {
  if (claims.length === 0) return new Set();
  const rows = await db.query<{ id: number | string }>(
    `select o.id from unnest($1::bigint[], $2::timestamptz[]) as t(id, lease)
     join outbox o on o.id = t.id and o.locked_until = t.lease
     join event_actions a on a.id = o.event_action_id join events e on e.id = a.event_id
     where e.erased_at is null`,
    [claims.map((c) => c.id), claims.map((c) => c.lease)],
  );
  return new Set(rows.map((r) => Number(r.id)));
}

/**
 * Writes a round's outcomes in ONE statement (the rows' fates in the outbox, fenced by their leases, then for the rows
 * still held their actions' new state, their delivery attempts and their events' statuses); returns the claim ids
 * still held. One statement instead of seven: each is a round trip to PostgreSQL and a fixed cost on the embedded
 * store. The caller must have locked the rows' events (lockEvents) earlier in its transaction: the events' statuses
 * are computed from this statement's snapshot (the actions' stored statuses, with this round's results over them),
 * which then holds every other worker's committed result for those events.
 *
 * A row rescheduled to wait for a new authorization (`last_error` REAUTHORIZATION_WAIT) whose connection is connected
 * by now is due at `at` instead: a reconnect (or a passing connection test) that committed while this worker held the
 * row could not make it due (resumeDeliveries leaves held rows alone). Its connection is locked first, so a reconnect
 * in progress is waited for, and one that comes later finds the row no longer held.
 */
export async function recordOutcomes(tx: Queryable, rows: readonly RowOutcome[], at: Date): Promise<Set<number>> {
  if (rows.length === 0) return new Set();
  const finished = rows.filter((r) => r.finish);
  const moved = rows.filter((r) => !r.finish && r.reschedule);
  const acted = rows.filter((r) => r.action);
  const json = (value: unknown) => (value ? JSON.stringify(value) : null);
  await lockConnectionsOfRows(tx, moved.filter((r) => r.reschedule!.lastError === REAUTHORIZATION_WAIT).map((r) => r.claim.id));
  const kept = await tx.query<{ id: number | string }>(
    `with done as (
       delete from outbox o using unnest($1::bigint[], $2::timestamptz[]) as t(id, lease)
       where o.id = t.id and o.locked_until = t.lease returning o.id
     ),
     moved as (
       update outbox o set
         due_at = case
           when t.last_error = '${REAUTHORIZATION_WAIT}' and exists (
             select 1 from event_actions a join events e on e.id = a.event_id
             join destinations d on d.account_id = e.account_id and d.type = a.destination
             where a.id = o.event_action_id and d.status = 'connected') then $15::timestamptz
           else t.due_at end,
         locked_until = null, attempts = o.attempts + t.added,
         last_error = coalesce(t.last_error, o.last_error)
       from unnest($3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::int[], $7::text[]) as t(id, lease, due_at, added, last_error)
       where o.id = t.id and o.locked_until = t.lease returning o.id
     ),
     kept as (select id from done union all select id from moved),
     -- Only rows this worker still held get their outcome written: a lost lease means another worker owns the row now.
     -- The request summary (hashed identifiers, click ids) of an event erased meanwhile is never written, and that of an
     -- event whose identity the retention cleared meanwhile (it read the event before) is written without its hashes.
     results as (
       select t.outbox_id, t.id, t.status, t.attempts, t.error, t.counted,
         case when e.erased_at is not null then null
              when e.identity_cleared_at is not null then ${withoutHashes('t.request')}
              else t.request end as request
       from unnest($8::bigint[], $9::text[], $10::text[], $11::int[], $12::jsonb[], $13::jsonb[], $14::boolean[])
         as t(outbox_id, id, status, attempts, error, request, counted)
       join event_actions ea on ea.id = t.id join events e on e.id = ea.event_id
       where t.outbox_id in (select id from kept)
     ),
     actions as (
       update event_actions a set status = r.status, attempts = r.attempts, error = r.error,
         request = coalesce(r.request, a.request),
         delivered_at = case when r.status = 'delivered' then $15::timestamptz else a.delivered_at end,
         updated_at = $15::timestamptz
       from results r where a.id = r.id
     ),
     attempts as (
       insert into delivery_attempts (event_action_id, attempt, at, outcome, error, request)
       select r.id, r.attempts, $15::timestamptz, case when r.status = 'queued' then 'retry' else r.status end, r.error, r.request
       from results r where r.counted
     ),
     -- Each event of an action written above, its status from all its actions (this round's results over the stored).
     statuses as (
       select a.event_id, ${eventStatusAggregate('coalesce(r.status, a.status)')} as status
       from event_actions a left join results r on r.id = a.id
       where a.event_id in (select x.event_id from event_actions x join results r on r.id = x.id)
       group by a.event_id
     ),
     events_updated as (
       update events e set status = s.status from statuses s where e.id = s.event_id and e.status <> s.status
     )
     select id from kept`,
    [
      finished.map((r) => r.claim.id),
      finished.map((r) => r.claim.lease),
      moved.map((r) => r.claim.id),
      moved.map((r) => r.claim.lease),
      moved.map((r) => r.reschedule!.dueAt),
      moved.map((r) => (r.reschedule!.countAttempt ? 1 : 0)),
      moved.map((r) => r.reschedule!.lastError ?? null),
      acted.map((r) => r.claim.id),
      acted.map((r) => r.action!.actionId),
      acted.map((r) => r.action!.status),
      acted.map((r) => r.action!.attempts),
      acted.map((r) => json(r.action!.error)),
      acted.map((r) => json(r.action!.request)),
      acted.map((r) => r.countsAttempt),
      at,
    ],
  );
  return new Set(kept.map((r) => Number(r.id)));
}

/**
 * Makes the deliveries of an account's destination type that wait for its authorization due now (a new handoff, or a
 * connection test that passed, connected it again): its queued conversions whose outbox row waits for reauthorization
 * (`last_error` REAUTHORIZATION_WAIT) and its queued adjustments waiting the same way. Rows a worker holds right now
 * are left to it (it makes them due as it writes them, see recordOutcomes and recordAdjustmentResults), and rows waiting for anything else (a platform's rate-limit wait, a retry's backoff, a
 * browser snapshot) keep their time. Returns how many of both.
 */
export async function resumeDeliveries(tx: Queryable, accountId: string, destinationType: string): Promise<number> {
  const rows = await tx.query(
    `update outbox o set due_at = now(), locked_until = null
     from event_actions a join events e on e.id = a.event_id
     where o.event_action_id = a.id and a.destination = $2 and e.account_id = $1 and a.status = 'queued'
       and o.last_error = '${REAUTHORIZATION_WAIT}' and (o.locked_until is null or o.locked_until < now())
     returning o.id`,
    [accountId, destinationType],
  );
  const adjustments = await tx.query(
    `update adjustment_results r set due_at = now()
     from event_actions a join events e on e.id = a.event_id
     where r.event_action_id = a.id and a.destination = $2 and e.account_id = $1 and r.status = 'queued'
       and r.error->>'code' = 'reauthorization_required'
       and (r.locked_until is null or r.locked_until < now())
     returning r.id`,
    [accountId, destinationType],
  );
  return rows.length + adjustments.length;
}
