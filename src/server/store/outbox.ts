/** SQL of the delivery outbox: pending event actions, claimed by the delivery worker. */
import type { Queryable } from './db';

/** Queues an event action for delivery, due at once (or at `dueAt`). */
export async function enqueueDelivery(tx: Queryable, eventActionId: string, dueAt: Date = new Date()): Promise<void> {
  await tx.query('insert into outbox (event_action_id, due_at) values ($1, $2)', [eventActionId, dueAt]);
}
