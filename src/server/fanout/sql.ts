/** SQL that writes events (captured conversions) with their per-destination actions, queued for delivery. */
import type { Queryable } from '../db/db';
import { newId } from '../db/ids';
import { compareText, compositeKey } from '../db/composite-key';
import { enqueueDeliveries, type EventStatus } from '../delivery';


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
  /** The conversion's value and currency (both or neither), and the reporter's customer id. */
  value?: number | null;
  currency?: string | null;
  customerId?: string | null;
  /** One per destination of the flow, in the flow's order. */
  actions: ReadonlyArray<{ destination: string; conversionId: string | null }>;
  /** When its actions become due for delivery (default: now); later while a report waits for its snapshot. */
  deliverAt?: Date;
}

/** Most events of one account that can share one millisecond of sort_at (one microsecond slot each). */
const SLOTS_PER_MILLISECOND = 1000;

/**
 * Inserts an event and its actions and queues each action for delivery, in the caller's transaction.
 * sort_at is occurred_at (to the millisecond) plus a microsecond tie-breaker that makes it unique in the account, so
 * the timestamp cursor of the events list can neither skip nor repeat events that share a timestamp.
 */
export async function insertEvent(tx: Queryable, event: NewEvent): Promise<{ id: string; actionIds: string[] }> {
  const [inserted] = await insertEvents(tx, [event]);
  return inserted!;
}

/**
 * Inserts events with their actions and outbox rows in a handful of statements, whatever their number (group commit
 * of the webhook); returns each event's id and action ids, in input order. sort_at as for insertEvent: events that
 * share an account and a millisecond take the next free microsecond slots, in input order.
 */
export async function insertEvents(tx: Queryable, events: readonly NewEvent[]): Promise<Array<{ id: string; actionIds: string[] }>> {
  if (events.length === 0) return [];
  const ids = events.map(() => newId('evt'));
  await insertEventRows(tx, events, ids);

  const actions = events.flatMap((event, i) =>
    event.actions.map((action, position) => ({ id: newId('act'), eventId: ids[i]!, position, action, dueAt: event.deliverAt ?? new Date() })),
  );
  if (actions.length > 0) {
    await tx.query(
      `insert into event_actions (id, event_id, position, destination, conversion_id)
       select * from unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[])`,
      [actions.map((a) => a.id), actions.map((a) => a.eventId), actions.map((a) => a.position),
        actions.map((a) => a.action.destination), actions.map((a) => a.action.conversionId)],
    );
    // One outbox row per action for the delivery worker, due at the event's deliverAt.
    await enqueueDeliveries(tx, actions.map((a) => ({ eventActionId: a.id, dueAt: a.dueAt })));
  }
  const actionIds = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const a of actions) actionIds.get(a.eventId)!.push(a.id);
  return ids.map((id) => ({ id, actionIds: actionIds.get(id)! }));
}

/**
 * Inserts the event rows. Each (account, millisecond) starts at the count of events already there; a slot another
 * writer has taken meanwhile makes that event try the next one up (on conflict do nothing: no aborted transaction),
 * one statement per round for every event still without a slot.
 */
async function insertEventRows(tx: Queryable, events: readonly NewEvent[], ids: readonly string[]): Promise<void> {
  const groupOf = events.map((e) => compositeKey(e.accountId, e.occurredAt.getTime()));
  const groups = [...new Map(events.map((e, i) => [groupOf[i]!, e])).entries()];
  const counted = await tx.query<{ n: number | string; taken: number }>(
    `select g.n, (select count(*)::int from events e where e.account_id = g.account_id
        and e.sort_at >= date_trunc('milliseconds', g.at)
        and e.sort_at < date_trunc('milliseconds', g.at) + interval '1 millisecond') as taken
     from unnest($1::text[], $2::timestamptz[]) with ordinality as g(account_id, at, n)`,
    [groups.map(([, e]) => e.accountId), groups.map(([, e]) => e.occurredAt)],
  );
  const nextSlot = new Map<string, number>();
  for (const row of counted) nextSlot.set(groups[Number(row.n) - 1]![0], Number(row.taken));

  // Sorted by account and sort_at, so concurrent writers on one PostgreSQL take the unique index's locks in one order.
  let pending = events.map((_, i) => i).sort((a, b) => compareText(groupOf[a]!, groupOf[b]!) || a - b);
  while (pending.length > 0) {
    const slots = pending.map((i) => {
      const slot = nextSlot.get(groupOf[i]!)!;
      if (slot >= SLOTS_PER_MILLISECOND) throw new Error(`more than ${SLOTS_PER_MILLISECOND} events of one account in one millisecond`);
      nextSlot.set(groupOf[i]!, slot + 1);
      return slot;
    });
    const rows = pending.map((i) => events[i]!);
    const inserted = await tx.query<{ id: string }>(
      `insert into events (id, account_id, site_id, site_key, flow_id, flow_name, report_id, trigger, occurred_at, sort_at,
         status, match_quality, email, click_ids, data, value, currency, customer_id)
       select id, account_id, site_id, site_key, flow_id, flow_name, report_id, trigger, occurred_at,
         date_trunc('milliseconds', occurred_at) + make_interval(secs => slot / 1000000.0),
         status, match_quality, email, click_ids, data, value, currency, customer_id
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
         $9::timestamptz[], $10::int[], $11::text[], $12::text[], $13::text[], $14::jsonb[], $15::jsonb[],
         $16::numeric[], $17::text[], $18::text[])
         with ordinality as t(id, account_id, site_id, site_key, flow_id, flow_name, report_id, trigger, occurred_at, slot,
           status, match_quality, email, click_ids, data, value, currency, customer_id, n)
       order by n
       on conflict (account_id, sort_at) do nothing returning id`,
      [
        pending.map((i) => ids[i]!),
        rows.map((e) => e.accountId),
        rows.map((e) => e.siteId),
        rows.map((e) => e.siteKey),
        rows.map((e) => e.flowId),
        rows.map((e) => e.flowName),
        rows.map((e) => e.reportId),
        rows.map((e) => e.trigger),
        rows.map((e) => e.occurredAt),
        slots,
        rows.map((e): EventStatus => (e.actions.length > 0 ? 'queued' : 'completed')),
        rows.map((e) => e.matchQuality),
        rows.map((e) => e.email?.trim().toLowerCase() || null),
        rows.map((e) => (e.clickIds ? JSON.stringify(e.clickIds) : null)),
        rows.map((e) => JSON.stringify(e.data)),
        rows.map((e) => e.value ?? null),
        rows.map((e) => e.currency ?? null),
        rows.map((e) => e.customerId ?? null),
      ],
    );
    const done = new Set(inserted.map((row) => row.id));
    pending = pending.filter((i) => !done.has(ids[i]!));
  }
}
