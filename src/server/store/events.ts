/** SQL that writes events (captured conversions) with their per-destination actions, queued for delivery. */
import type { Queryable } from './db';
import { newId } from '../ids';
import { enqueueDelivery } from './outbox';

export type EventStatus = 'queued' | 'completed' | 'failed';

/** An event to record: one per (report or form submission) x live flow. */
export interface NewEvent {
  accountId: string;
  siteId: string;
  siteKey: string;
  flowId: string | null;
  flowName: string | null;
  reportId: string | null;
  /** What fired it, e.g. `api` (signed webhook) or `form_submission`. */
  trigger: string;
  occurredAt: Date;
  /** `high` with a click id, `medium` with a correlated snapshot but no click id, `low` identity only. */
  matchQuality: string | null;
  email: string | null;
  clickIds: Record<string, string> | null;
  /** Everything else worth showing (touch, utm, customer_event_id, correlation): passed through to readers. */
  data: Record<string, unknown>;
  /** One per destination of the flow, in the flow's order. */
  actions: ReadonlyArray<{ destination: string; conversionId: string | null }>;
}

/**
 * Inserts an event and its actions and queues each action for delivery, in the caller's transaction.
 * sort_at is occurred_at (to the millisecond) plus a microsecond tie-breaker that makes it unique in the account, so
 * the timestamp cursor of the events list can neither skip nor repeat events that share a timestamp.
 */
export async function insertEvent(tx: Queryable, event: NewEvent): Promise<{ id: string; actionIds: string[] }> {
  const id = newId('evt');
  const status: EventStatus = event.actions.length > 0 ? 'queued' : 'completed';
  const [{ taken }] = (await tx.query<{ taken: number }>(
    `select count(*)::int as taken from events where account_id = $1
       and sort_at >= date_trunc('milliseconds', $2::timestamptz)
       and sort_at < date_trunc('milliseconds', $2::timestamptz) + interval '1 millisecond'`,
    [event.accountId, event.occurredAt],
  )) as [{ taken: number }];
  // Concurrent writers may take the same slot: on conflict try the next microsecond (no aborted transaction).
  for (let slot = Number(taken); ; slot++) {
    if (slot >= 1000) throw new Error('more than 1000 events of one account in one millisecond');
    const inserted = await tx.query(
      `insert into events (id, account_id, site_id, site_key, flow_id, flow_name, report_id, trigger, occurred_at, sort_at,
         status, match_quality, email, click_ids, data)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9,
         date_trunc('milliseconds', $9::timestamptz) + make_interval(secs => $10::int / 1000000.0),
         $11, $12, $13, $14, $15)
       on conflict (account_id, sort_at) do nothing returning id`,
      [
        id, event.accountId, event.siteId, event.siteKey, event.flowId, event.flowName, event.reportId, event.trigger,
        event.occurredAt, slot, status, event.matchQuality, event.email?.trim().toLowerCase() || null,
        event.clickIds ? JSON.stringify(event.clickIds) : null, JSON.stringify(event.data),
      ],
    );
    if (inserted.length > 0) break;
  }
  const actionIds: string[] = [];
  for (const [position, action] of event.actions.entries()) {
    const actionId = newId('act');
    await tx.query(
      `insert into event_actions (id, event_id, position, destination, conversion_id) values ($1, $2, $3, $4, $5)`,
      [actionId, id, position, action.destination, action.conversionId],
    );
    await enqueueDelivery(tx, actionId);
    actionIds.push(actionId);
  }
  return { id, actionIds };
}
