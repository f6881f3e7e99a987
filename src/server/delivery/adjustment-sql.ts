/**
 * SQL of the adjustment queue: the results of adjustments (one per adjustment and event action), claimed once their
 * original delivery has settled and every earlier adjustment of the same action has been applied, and recorded.
 */
import type { Queryable } from '../db/db';
import { withoutHashes } from '../privacy';

/** A claimed adjustment result; `lease` fences what this worker may write. */
export interface ClaimedAdjustment {
  id: string;
  attempts: number;
  lease: Date;
}

/**
 * Claims up to `limit` due adjustment results whose event action is no longer queued (the original delivery came
 * first: delivered, failed, or skipped) and that no earlier adjustment of the same action is still waiting for.
 */
export async function claimAdjustments(db: Queryable, options: { now: Date; leaseMs: number; limit: number }): Promise<ClaimedAdjustment[]> {
  const lease = new Date(options.now.getTime() + options.leaseMs);
  const rows = await db.query<{ id: string; attempts: number }>(
    `with due as (
       select r.id from adjustment_results r
       join event_actions a on a.id = r.event_action_id
       where r.status = 'queued' and r.due_at <= $1 and (r.locked_until is null or r.locked_until < $1)
         and a.status <> 'queued'
         and not exists (
           select 1 from adjustment_results p where p.event_action_id = r.event_action_id and p.seq < r.seq and p.status = 'queued')
       order by r.seq
       limit $3
       for update of r skip locked
     )
     update adjustment_results r set locked_until = $2 from due where r.id = due.id
     returning r.id, r.attempts`,
    [options.now, lease, options.limit],
  );
  return rows.map((r) => ({ id: r.id, attempts: Number(r.attempts), lease }));
}

/** A claimed result with its adjustment and the state of the event action it adjusts. */
export interface AdjustmentRecord {
  id: string;
  adjustment_id: string;
  type: 'restate' | 'retract';
  value: string | number | null;
  currency: string | null;
  occurred_at: Date;
  /**
   * The occurred_at of the earlier adjustments of the same event action that are sent, in the order they apply (epoch
   * ms): a superseded restatement (webhook/adjustment-sql.ts) is never sent, so it is left out.
   */
  earlier_occurred_at: Array<number | string>;
  event_action_id: string;
  action_status: string;
  action_error: { code?: string; message?: string; hint?: string } | null;
  action_request: Record<string, unknown> | null;
}

/** Loads claimed results with their adjustment and action, by result id. */
export async function loadAdjustmentRecords(db: Queryable, ids: readonly string[]): Promise<Map<string, AdjustmentRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<AdjustmentRecord>(
    `select r.id, j.adjustment_id, j.type, j.value, j.currency, j.occurred_at,
            array(select (extract(epoch from pj.occurred_at) * 1000)::float8
                  from adjustment_results p join adjustments pj on pj.id = p.adjustment_id
                  where p.event_action_id = r.event_action_id and p.seq < r.seq and not pj.superseded order by p.seq) as earlier_occurred_at,
            r.event_action_id,
            a.status as action_status, a.error as action_error, a.request as action_request
     from adjustment_results r join adjustments j on j.id = r.adjustment_id join event_actions a on a.id = r.event_action_id
     where r.id = any($1::text[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The claims of `claims` still held, of events not erased: read just before a batch of adjustments is sent. An erasure
 * takes the leases of the person's queued adjustments (and marks them failed) after the round read them: those are not
 * sent from that earlier read. (One already on its way when the erasure commits cannot be called back.)
 */
export async function adjustmentClaimsStillHeld(db: Queryable, claims: readonly ClaimedAdjustment[]): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(
    `select r.id from unnest($1::text[], $2::timestamptz[]) as t(id, lease)
     join adjustment_results r on r.id = t.id and r.locked_until = t.lease
     join event_actions a on a.id = r.event_action_id join events e on e.id = a.event_id
     where e.erased_at is null`,
    [claims.map((c) => c.id), claims.map((c) => c.lease)],
  );
  return new Set(rows.map((r) => r.id));
}

/** The new state of a claimed result: settled (adjusted, unsupported, failed), or queued again at `dueAt`. */
export interface AdjustmentResultUpdate {
  claim: ClaimedAdjustment;
  status: 'queued' | 'adjusted' | 'unsupported' | 'failed';
  reason: string | null;
  /** Sends made so far (a wait that sent nothing keeps the count). */
  attempts: number;
  request: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  /** When queued again. */
  dueAt?: Date;
  /**
   * Why it is queued again without a send's fault: a shutdown interrupted it, it waits for a new authorization, or a
   * reconnect replaced the credentials the platform refused (due at once).
   */
  waiting?: 'interrupted' | 'waiting_for_reauthorization' | 'waiting_for_oauth_client' | 'credentials_replaced';
}

/**
 * Writes results still held under their claims, in one statement; returns the ids written. An erasure of the event
 * takes the claim away (so nothing is written), and a request summary is never written for an erased event. A result
 * queued to wait for a new authorization (error code `reauthorization_required`) whose connection is connected by now
 * is due at `at`: a reconnect that committed while this worker held it could not make it due (resumeDeliveries leaves
 * held results alone). Those connections are locked first, as for conversions (recordOutcomes, outbox-sql.ts).
 */
export async function recordAdjustmentResults(tx: Queryable, updates: readonly AdjustmentResultUpdate[], at: Date): Promise<Set<string>> {
  if (updates.length === 0) return new Set();
  const waiting = updates.filter((u) => u.status === 'queued' && u.error?.code === 'reauthorization_required').map((u) => u.claim.id);
  if (waiting.length > 0) {
    await tx.query(
      `select d.id from adjustment_results r join event_actions a on a.id = r.event_action_id join events e on e.id = a.event_id
       join destinations d on d.account_id = e.account_id and d.type = a.destination
       where r.id = any($1::text[]) order by d.id for share of d`,
      [waiting],
    );
  }
  const rows = await tx.query<{ id: string }>(
    `update adjustment_results r set status = t.status, reason = t.reason, attempts = t.attempts,
       request = case when exists (select 1 from event_actions a join events e on e.id = a.event_id
                                   where a.id = r.event_action_id and e.erased_at is not null) then null
                      when exists (select 1 from event_actions a join events e on e.id = a.event_id
                                   where a.id = r.event_action_id and e.identity_cleared_at is not null)
                        then ${withoutHashes('coalesce(t.request, r.request)')}
                      else coalesce(t.request, r.request) end,
       error = t.error,
       due_at = case
         when t.status = 'queued' and t.error->>'code' = 'reauthorization_required' and exists (
           select 1 from event_actions a join events e on e.id = a.event_id
           join destinations d on d.account_id = e.account_id and d.type = a.destination
           where a.id = r.event_action_id and d.status = 'connected') then $9::timestamptz
         else coalesce(t.due_at, r.due_at) end,
       locked_until = null,
       updated_at = $9::timestamptz
     from unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::int[], $6::jsonb[], $7::jsonb[], $8::timestamptz[])
       as t(id, lease, status, reason, attempts, request, error, due_at)
     where r.id = t.id and r.locked_until = t.lease
     returning r.id`,
    [
      updates.map((u) => u.claim.id),
      updates.map((u) => u.claim.lease),
      updates.map((u) => u.status),
      updates.map((u) => u.reason),
      updates.map((u) => u.attempts),
      updates.map((u) => (u.request ? JSON.stringify(u.request) : null)),
      updates.map((u) => (u.error ? JSON.stringify(u.error) : null)),
      updates.map((u) => u.dueAt ?? null),
      at,
    ],
  );
  return new Set(rows.map((r) => r.id));
}

/** An adjustment a first send of its conversion carried (round.ts: folded in, or the conversion retracted unsent). */
export interface FoldedAdjustment {
  eventActionId: string;
  /** The adjustment's row id (adjustments.id). */
  adjustmentId: string;
  reason: string;
}

/**
 * Settles the results of adjustments that the first send of their conversion already carried: `adjusted`, with the
 * reason, in the transaction that records that send. A result still queued (it waited behind the send) or failed (the
 * conversion's earlier delivery had failed, and this was a redelivery) is settled; one already sent is left as it is.
 */
export async function settleFoldedAdjustments(tx: Queryable, folded: readonly FoldedAdjustment[], at: Date): Promise<void> {
  if (folded.length === 0) return;
  await tx.query(
    `update adjustment_results r set status = 'adjusted', reason = t.reason, error = null, locked_until = null, updated_at = $4::timestamptz
     from unnest($1::text[], $2::text[], $3::text[]) as t(event_action_id, adjustment_id, reason)
     where r.event_action_id = t.event_action_id and r.adjustment_id = t.adjustment_id and r.status in ('queued', 'failed')`,
    [folded.map((f) => f.eventActionId), folded.map((f) => f.adjustmentId), folded.map((f) => f.reason), at],
  );
}
