/**
 * Sending the failed actions of an event again, after the user fixed their cause (a conversion action id, a
 * permission): each failed action is queued afresh (attempts from zero, the same event and action ids, so the
 * platforms' dedup ids are those of the first sends), and the event is `queued` again until they settle.
 */
import type { Database } from '../db/db';
import { enqueueDeliveries } from './outbox-sql';
import { refreshEventStatuses } from './sql';
import { requestDelivery } from './wakeup';

/** Queues an event's failed actions again; returns their ids (none when nothing of the event failed). */
export async function redeliverFailedActions(db: Database, eventId: string): Promise<string[]> {
  const ids = await db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string }>(
      `update event_actions set status = 'queued', attempts = 0, error = null, updated_at = now()
       where event_id = $1 and status = 'failed'
         and not exists (select 1 from events e where e.id = $1 and e.erased_at is not null) returning id`,
      [eventId],
    );
    const actionIds = rows.map((r) => r.id);
    if (actionIds.length === 0) return actionIds;
    // A row may still be in the outbox only if the action was not failed; failed ones were removed when they failed.
    await enqueueDeliveries(tx, actionIds.map((eventActionId) => ({ eventActionId, dueAt: new Date() })));
    await refreshEventStatuses(tx, [eventId]);
    return actionIds;
  });
  if (ids.length > 0) requestDelivery();
  return ids;
}
