/**
 * Sending the failed actions of an event again, after the user fixed their cause (a conversion action id, a
 * permission): each failed action is queued afresh (attempts from zero, the same event and action ids, so the
 * platforms' dedup ids are those of the first sends), and the event is `queued` again until they settle.
 */
import type { Database, Queryable } from '../db/db';
import { enqueueDeliveries } from './outbox-sql';
import { FLOW_ACTION_OF_EVENT_ACTION, lockEvents, refreshEventStatuses } from './sql';
import { requestDelivery } from './wakeup';

/**
 * Queues the failed actions of events the caller has locked again (of one destination type, or of all when null):
 * attempts from zero, due now, their events' statuses refreshed. An erased person's events are left out. A failed
 * action has no outbox row any more (it was removed when the action failed), so each gets a fresh one.
 *
 * An action keeps the conversion id its flow had when the event was written (so a flow edited later never moves a
 * conversion, or its adjustments, elsewhere); a failed one takes the flow's current one, from the flow's action of its
 * platform (FLOW_ACTION_OF_EVENT_ACTION): "conversion action not found" is fixed by correcting the flow, and a redelivery
 * that sent the old id again failed again however often it was sent.
 */
async function requeueFailedActions(tx: Queryable, eventIds: readonly string[], destinationType: string | null): Promise<Array<{ id: string; event_id: string }>> {
  const rows = await tx.query<{ id: string; event_id: string }>(
    `update event_actions a set status = 'queued', attempts = 0, error = null, updated_at = now(),
       conversion_id = coalesce((
         select case when jsonb_typeof(x -> 'config' -> 'conversion' -> 'id') = 'string' then x -> 'config' -> 'conversion' ->> 'id' end
         from flows f, lateral (select ${FLOW_ACTION_OF_EVENT_ACTION} as x) flow_action
         where f.id = e.flow_id
       ), a.conversion_id)
     from events e
     where e.id = a.event_id and a.event_id = any($1::text[]) and ($2::text is null or a.destination = $2) and a.status = 'failed'
       and e.erased_at is null and coalesce(e.data ->> 'erased', '') <> 'true'
     returning a.id, a.event_id`,
    [eventIds, destinationType],
  );
  if (rows.length === 0) return rows;
  const now = new Date();
  await enqueueDeliveries(tx, rows.map((r) => ({ eventActionId: r.id, dueAt: now })));
  await refreshEventStatuses(tx, rows.map((r) => r.event_id));
  return rows;
}

/** What a redelivery did: the actions queued again (none when nothing of the event failed), or nothing: it was erased. */
export type RedeliveryResult = { erased: false; actionIds: string[] } | { erased: true };

/**
 * Queues an event's failed actions again. The event's row is locked first, as the delivery worker and an erasure lock
 * it before its actions: an erasure under way commits before the event is read here (and it is erased: nothing is
 * queued), or waits until this has committed (and then cancels what was queued). A test of the event's erased_at
 * within the update would not do: waiting for the erasure's lock on an action, PostgreSQL re-checks only that row.
 */
export async function redeliverFailedActions(db: Database, eventId: string): Promise<RedeliveryResult> {
  const result = await db.transaction(async (tx): Promise<RedeliveryResult> => {
    await lockEvents(tx, [eventId]);
    const [event] = await tx.query<{ erased: boolean }>('select erased_at is not null as erased from events where id = $1', [eventId]);
    if (event?.erased) return { erased: true };
    const rows = await requeueFailedActions(tx, [eventId], null);
    return { erased: false, actionIds: rows.map((r) => r.id) };
  });
  if (!result.erased && result.actionIds.length > 0) requestDelivery();
  return result;
}

/** Which failed deliveries of a destination to send again (RedeliverDestinationBody). */
export interface DestinationRedeliveryFilter {
  siteId?: string;
  flowId?: string;
  /** Only events that occurred at or after this time. */
  occurredAfter?: Date;
  /** Most events in one call (their failed actions of this destination go whole); oldest first. */
  limit: number;
}

/** What a destination's redelivery queued: events and actions, and whether older-first more are left for another call. */
export interface DestinationRedelivery {
  events: number;
  actions: number;
  hasMore: boolean;
}

/**
 * Queues again every failed action of one destination type of an account (after the user fixed what a whole
 * destination refused: a permission, an action missing in the ad account, a connection), oldest events first, up to
 * `limit` events a call. Only that destination's actions go: another platform's failures stay as they are. An erased
 * person's events are left alone (their sends were stopped on purpose). Events that still wait for another action
 * (queued) are included: their failed action of this destination is as failed as any. The events are locked before
 * their actions are read, as in redeliverFailedActions, and the erasure test is made after the lock.
 */
export async function redeliverFailedOfDestination(
  db: Database,
  accountId: string,
  destinationType: string,
  filter: DestinationRedeliveryFilter,
): Promise<DestinationRedelivery> {
  const result = await db.transaction(async (tx): Promise<DestinationRedelivery> => {
    // events_open_status_sort holds every event not completed: a failed action keeps its event so.
    const candidates = await tx.query<{ id: string }>(
      `select e.id from events e
       where e.account_id = $1 and e.status <> 'completed'
         and ($2::text is null or e.site_id = $2) and ($3::text is null or e.flow_id = $3)
         and ($4::timestamptz is null or e.occurred_at >= $4)
         and e.erased_at is null and coalesce(e.data ->> 'erased', '') <> 'true'
         and exists (select 1 from event_actions a where a.event_id = e.id and a.destination = $5 and a.status = 'failed')
       order by e.sort_at, e.id
       limit $6`,
      [accountId, filter.siteId ?? null, filter.flowId ?? null, filter.occurredAfter ?? null, destinationType, filter.limit + 1],
    );
    const hasMore = candidates.length > filter.limit;
    const ids = candidates.slice(0, filter.limit).map((r) => r.id);
    if (ids.length === 0) return { events: 0, actions: 0, hasMore: false };
    await lockEvents(tx, ids);
    const rows = await requeueFailedActions(tx, ids, destinationType);
    return { events: new Set(rows.map((r) => r.event_id)).size, actions: rows.length, hasMore };
  });
  if (result.actions > 0) requestDelivery();
  return result;
}
