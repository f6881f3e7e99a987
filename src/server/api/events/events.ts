/** Events (captured conversions) through the API: read-only, newest first, with a timestamp cursor. */
import type { Queryable } from '../../db/db';
import { findEvent, selectAdjustments, selectAttempts, selectEventActions, selectEvents, type AdjustmentView, type EventActionRow, type EventFilters, type EventRow } from './sql';
import { findFlow } from '../flows';
import { invalidParam, notFound } from '../../http/errors';
import type { ListEnvelope } from '../../http/pagination';
import { requireSite } from '../sites';
import { EVENTS_LIMIT_DEFAULT, type ListEventsQuery } from './schemas';

export { EVENTS_LIMIT_DEFAULT, EVENTS_LIMIT_MAX, EVENT_STATUSES } from './schemas';

/** One per-destination delivery result of an event. */
export interface EventActionRecord {
  destination: string;
  status: string;
  conversion_id: string | null;
  attempts: number;
  error: unknown;
  /** What was sent, without personal data (hashes, ids, kinds), and the platform's later diagnostics if any. */
  request: Record<string, unknown> | null;
  delivered_at: string | null;
  /** GET /v1/events/{id} only: every send, oldest first, with what was sent and what the platform answered. */
  history?: Array<{ attempt: number; at: string; outcome: string; error: unknown; request: Record<string, unknown> | null }>;
}

/** The Event record: the stored `data` passed through, under the fields the service owns. */
export interface EventRecord {
  id: string;
  site_id: string;
  site_key: string;
  occurred_at: string;
  flow_id: string | null;
  flow_name: string | null;
  trigger: string | null;
  /** Which trigger type fired: `saas_signup`, `conversion` (a later stage) or `form_submission`. */
  trigger_type: string | null;
  status: string;
  match_quality: string | null;
  email: string | null;
  customer_event_id: string | null;
  /** What the conversion is worth (major unit of `currency`), or null; the reporter's customer id, or null. */
  value: number | null;
  currency: string | null;
  /** The value as it stands after its adjustments (currentValueOf). */
  current_value: number | null;
  current_currency: string | null;
  customer_id: string | null;
  click_ids: Record<string, string> | null;
  utm: unknown;
  actions: EventActionRecord[];
  /** Restatements and retractions of this conversion, in the order they arrived, each with a result per destination. */
  adjustments: Array<Omit<AdjustmentView, 'event_id'>>;
  created_at: string;
  [passedThrough: string]: unknown;
}

function toActionRecord(row: EventActionRow): EventActionRecord {
  return {
    destination: row.destination,
    status: row.status,
    conversion_id: row.conversion_id,
    attempts: Number(row.attempts),
    error: row.error ?? null,
    request: row.request ?? null,
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
  };
}

/** The trigger type of an event: a form's, a later stage's (recorded in data), else a webhook signup's. */
function triggerTypeOf(row: EventRow): string | null {
  if (row.trigger === 'form_submission') return 'form_submission';
  if (typeof row.data?.trigger_type === 'string') return row.data.trigger_type;
  return row.trigger === 'api' ? 'saas_signup' : row.trigger;
}

/**
 * The adjustment a conversion stands at (`adjustments` in the order they arrived), read from what was stored: its
 * retraction, once it has one (a retraction is final: the webhook refuses a restatement after it, 409
 * conversion_retracted, and one stored before that rule changes nothing), else the last to arrive of its restatements
 * not superseded. A restatement dated before the one standing when it arrived is stored superseded and never sent
 * (webhook/adjustment-sql.ts), so this is the latest-dated one, of those dated alike the last to arrive; in a store
 * that recorded restatements before migration 32 (every one sent, in the order they arrived) it is the one the
 * platforms kept. Either way the value the platforms end at and the one a first send folds in (delivery/sql.ts).
 */
export function standingAdjustment<A extends { type: string; superseded: boolean }>(adjustments: readonly A[]): A | undefined {
  const retraction = adjustments.find((a) => a.type === 'retract');
  if (retraction) return retraction;
  let standing: A | undefined;
  for (const a of adjustments) if (a.type === 'restate' && !a.superseded) standing = a;
  return standing;
}

/**
 * A conversion's value as it stands after its adjustments (standingAdjustment): a restatement's value and currency, 0
 * once retracted (in the reported currency), else the reported value.
 */
export function currentValueOf(
  reported: { value: number | null; currency: string | null },
  adjustments: ReadonlyArray<{ type: string; value: number | null; currency: string | null; superseded: boolean }>,
): { value: number | null; currency: string | null } {
  const latest = standingAdjustment(adjustments);
  if (latest?.type === 'retract') return { value: 0, currency: reported.currency };
  if (latest?.type === 'restate' && latest.value !== null) return { value: latest.value, currency: latest.currency };
  return reported;
}

/** The API view of an event and its actions. */
export function toEventRecord(row: EventRow, actions: readonly EventActionRow[], adjustments: readonly AdjustmentView[] = []): EventRecord {
  const data = row.data ?? {};
  const reported = { value: row.value === null ? null : Number(row.value), currency: row.currency };
  const current = currentValueOf(reported, adjustments);
  return {
    ...data,
    id: row.id,
    site_id: row.site_id,
    site_key: row.site_key,
    occurred_at: row.occurred_at.toISOString(),
    flow_id: row.flow_id,
    flow_name: row.flow_name,
    trigger: row.trigger,
    trigger_type: triggerTypeOf(row),
    status: row.status,
    match_quality: row.match_quality,
    email: row.email,
    customer_event_id: typeof data.customer_event_id === 'string' ? data.customer_event_id : null,
    value: reported.value,
    currency: reported.currency,
    current_value: current.value,
    current_currency: current.currency,
    customer_id: row.customer_id,
    click_ids: row.click_ids,
    utm: data.utm ?? null,
    actions: actions.map(toActionRecord),
    adjustments: adjustments.map(({ event_id: _event, ...view }) => view),
    created_at: row.created_at.toISOString(),
  };
}

async function withActions(db: Queryable, rows: EventRow[]): Promise<EventRecord[]> {
  const actions = await selectEventActions(db, rows.map((r) => r.id));
  const byEvent = new Map<string, EventActionRow[]>();
  for (const action of actions) {
    const list = byEvent.get(action.event_id) ?? [];
    list.push(action);
    byEvent.set(action.event_id, list);
  }
  const adjustments = await selectAdjustments(db, rows.map((r) => r.id));
  return rows.map((row) => toEventRecord(row, byEvent.get(row.id) ?? [], adjustments.filter((a) => a.event_id === row.id)));
}

/**
 * The filters of a (schema-checked) events query; site_id and flow_id must name objects of the account. The email and
 * status filters search recent events only (the spec's Limits): those stored since `recentSince`, the start of the
 * identity window (CNV_IDENTITY_RETENTION_DAYS), past which no event holds an email any more.
 */
async function eventFiltersOf(
  db: Queryable,
  accountId: string,
  query: ListEventsQuery,
  recentSince: Date | undefined,
  only: ListOnly,
): Promise<EventFilters> {
  const filters: EventFilters = { sortBefore: query.starting_after, occurredAfter: query.occurred_after, occurredBefore: query.occurred_before };
  if (filters.occurredAfter && filters.occurredBefore && Date.parse(filters.occurredAfter) > Date.parse(filters.occurredBefore)) {
    throw invalidParam('occurred_after', 'occurred_after must not be later than occurred_before.');
  }
  if (query.site_id !== undefined) filters.siteId = (await requireSite(db, accountId, query.site_id, 'site_id')).id;
  if (query.flow_id !== undefined) {
    if (!(await findFlow(db, accountId, query.flow_id))) throw notFound('flow', query.flow_id, 'flow_id');
    filters.flowId = query.flow_id;
  }
  if (query.email !== undefined) {
    // Stored lower-cased; never quoted back in a message.
    const email = query.email.trim().toLowerCase();
    if (!email) throw invalidParam('email', 'email must be a non-empty email address.');
    filters.email = email;
  }
  filters.status = query.status;
  if (filters.email !== undefined || filters.status !== undefined) filters.storedSince = recentSince;
  if (only.erased) filters.erased = true;
  return filters;
}

/**
 * What the dashboard narrows a list to beyond the REST query: `erased`, only the events whose person was erased (of any
 * age: they hold no identity, so the identity window does not apply). The spec fixes the REST status values, so this
 * is no `status` of GET /v1/events.
 */
export interface ListOnly {
  erased?: boolean;
}

/**
 * GET /v1/events: newest first. next_cursor is the exact sort key (microseconds) of the last event, so events that
 * share a timestamp are neither lost nor repeated across pages.
 */
export async function listEvents(
  db: Queryable,
  accountId: string,
  query: ListEventsQuery,
  recentSince?: Date,
  only: ListOnly = {},
): Promise<ListEnvelope<EventRecord>> {
  const filters = await eventFiltersOf(db, accountId, query, recentSince, only);
  const limit = query.limit ?? EVENTS_LIMIT_DEFAULT;
  const rows = await selectEvents(db, accountId, filters, limit + 1);
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  return { data: await withActions(db, page), has_more: hasMore, next_cursor: hasMore ? page[page.length - 1]!.cursor : null };
}

/** GET /v1/events/{id}. */
export async function getEvent(db: Queryable, accountId: string, id: string): Promise<EventRecord> {
  const row = await findEvent(db, accountId, id);
  if (!row) throw notFound('event', id);
  const [record] = await withActions(db, [row]);
  const actionRows = await selectEventActions(db, [row.id]);
  const attempts = await selectAttempts(db, actionRows.map((a) => a.id));
  record!.actions.forEach((action, i) => {
    const id = actionRows[i]?.id;
    action.history = attempts
      .filter((a) => a.event_action_id === id)
      .map((a) => ({ attempt: Number(a.attempt), at: a.at.toISOString(), outcome: a.outcome, error: a.error ?? null, request: a.request }));
  });
  return record!;
}
