/** POST /v1/events/{id}/redeliver: the event's failed actions are sent again; 409 when nothing of it failed or it was erased. */
import type { Database } from '../../db/db';
import { ApiError, notFound } from '../../http/errors';
import { redeliverFailedActions } from '../../delivery';
import { findEvent } from './sql';
import { getEvent, type EventRecord } from './events';

export async function redeliverEvent(db: Database, accountId: string, id: string): Promise<EventRecord> {
  const row = await findEvent(db, accountId, id);
  if (!row) throw notFound('event', id);
  // Its person was erased (seen here, or by the redelivery itself when the erasure committed meanwhile): what it would
  // carry is gone, and sending it again would tell a platform about them anew.
  const erased = () => new ApiError(409, 'conflict_error', 'event_erased', `Event '${id}' belongs to a person whose data was erased: it is never sent again.`);
  if (row.data?.erased === true) throw erased();
  const result = await redeliverFailedActions(db, row.id);
  if (result.erased) throw erased();
  if (result.actionIds.length === 0) {
    throw new ApiError(
      409,
      'conflict_error',
      'nothing_to_redeliver',
      `Nothing of event '${id}' failed: only failed actions are sent again (queued ones are still on their way, delivered and skipped ones are final).`,
    );
  }
  return getEvent(db, accountId, id);
}
