/**
 * Sending the failed actions of an event again, after the user fixed their cause (a conversion action id, a
 * permission): each failed action is queued afresh (attempts from zero, the same event and action ids, so the
 * platforms' dedup ids are those of the first sends), and the event is `queued` again until they settle.
 */
import type { Database } from '../db/db';
import { enqueueDeliveries } from './outbox-sql';
import { lockEvents, refreshEventStatuses } from './sql';
import { requestDelivery } from './wakeup';

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
    const rows = await tx.query<{ id: string }>(
      `update event_actions set status = 'queued', attempts = 0, error = null, updated_at = now()
       where event_id = $1 and status = 'failed' returning id`,
      [eventId],
    );
    const actionIds = rows.map((r) => r.id);
    if (actionIds.length === 0) return { erased: false, actionIds };
    // A row may still be in the outbox only if the action was not failed; failed ones were removed when they failed.
    await enqueueDeliveries(tx, actionIds.map((eventActionId) => ({ eventActionId, dueAt: new Date() })));
    await refreshEventStatuses(tx, [eventId]);
    return { erased: false, actionIds };
  });
  if (!result.erased && result.actionIds.length > 0) requestDelivery();
  return result;
}
