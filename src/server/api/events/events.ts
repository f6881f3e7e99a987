/** Events (captured conversions) through the API: read-only, newest first, with a timestamp cursor. */
import type { Queryable } from '../../db/db';
import { findEvent, selectEventActions, selectEvents, type EventActionRow, type EventFilters, type EventRow } from './sql';
import { findFlow } from '../flows';
import type { EventStatus } from '../../delivery';
import { invalidParam, notFound } from '../../http/errors';
import { parseLimit, type ListEnvelope } from '../../http/pagination';
import { queryString, rejectUnknownFields, type JsonObject } from '../../http/input';
import { requireSite } from '../sites';
import { isIsoTimestamp } from '../../http/timestamps';

/** Default and largest `limit` of GET /v1/events (the spec fixes only the maximum). */
export const EVENTS_LIMIT_DEFAULT = 25;
export const EVENTS_LIMIT_MAX = 100;

/** Event status values (spec, Event). */
export const EVENT_STATUSES: readonly EventStatus[] = ['queued', 'completed', 'failed'];

/** One per-destination delivery result of an event. */
export interface EventActionRecord {
  destination: string;
  status: string;
  conversion_id: string | null;
  attempts: number;
  error: unknown;
  delivered_at: string | null;
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
  status: string;
  match_quality: string | null;
  email: string | null;
  customer_event_id: string | null;
  click_ids: Record<string, string> | null;
  utm: unknown;
  actions: EventActionRecord[];
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
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
  };
}

/** The API view of an event and its actions. */
export function toEventRecord(row: EventRow, actions: readonly EventActionRow[]): EventRecord {
  const data = row.data ?? {};
  return {
    ...data,
    id: row.id,
    site_id: row.site_id,
    site_key: row.site_key,
    occurred_at: row.occurred_at.toISOString(),
    flow_id: row.flow_id,
    flow_name: row.flow_name,
    trigger: row.trigger,
    status: row.status,
    match_quality: row.match_quality,
    email: row.email,
    customer_event_id: typeof data.customer_event_id === 'string' ? data.customer_event_id : null,
    click_ids: row.click_ids,
    utm: data.utm ?? null,
    actions: actions.map(toActionRecord),
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
  return rows.map((row) => toEventRecord(row, byEvent.get(row.id) ?? []));
}

/** An ISO 8601 timestamp PostgreSQL accepts too (no year 0, offsets within ±15:59), so a bad value is a 400, not a 500. */
function isQueryTimestamp(value: string): boolean {
  if (!isIsoTimestamp(value) || value.startsWith('0000')) return false;
  const offset = /([+-])(\d{2}):\d{2}$/.exec(value);
  return !offset || Number(offset[2]) <= 15;
}

const TIMESTAMP_HINT = 'an ISO 8601 timestamp with a time zone, such as 2026-11-21T09:30:00Z (URL-encode a + offset as %2B)';

function timestampParam(query: JsonObject, param: string): string | undefined {
  const value = queryString(query, param);
  if (value === undefined) return undefined;
  if (!isQueryTimestamp(value)) throw invalidParam(param, `${param} must be ${TIMESTAMP_HINT} (got '${value}').`);
  return value;
}

/** Reads and checks the query of GET /v1/events; site_id and flow_id must name objects of the account. */
async function parseEventQuery(db: Queryable, accountId: string, query: JsonObject): Promise<{ filters: EventFilters; limit: number }> {
  if (query.ending_before !== undefined) {
    throw invalidParam(
      'ending_before',
      'ending_before is not supported on GET /v1/events: walk newest to oldest with starting_after = the previous next_cursor.',
      'parameter_unsupported',
    );
  }
  rejectUnknownFields(query, ['site_id', 'flow_id', 'email', 'status', 'occurred_after', 'occurred_before', 'limit', 'starting_after']);
  const limit = parseLimit(query, EVENTS_LIMIT_DEFAULT, EVENTS_LIMIT_MAX);
  const filters: EventFilters = {};
  const cursor = queryString(query, 'starting_after');
  if (cursor !== undefined) {
    if (!isQueryTimestamp(cursor)) {
      throw invalidParam('starting_after', `starting_after must be the next_cursor of a previous page: ${TIMESTAMP_HINT} (got '${cursor}').`, 'invalid_cursor');
    }
    filters.sortBefore = cursor;
  }
  filters.occurredAfter = timestampParam(query, 'occurred_after');
  filters.occurredBefore = timestampParam(query, 'occurred_before');
  if (filters.occurredAfter && filters.occurredBefore && Date.parse(filters.occurredAfter) > Date.parse(filters.occurredBefore)) {
    throw invalidParam('occurred_after', 'occurred_after must not be later than occurred_before.');
  }
  const siteId = queryString(query, 'site_id');
  if (siteId !== undefined) filters.siteId = (await requireSite(db, accountId, siteId, 'site_id')).id;
  const flowId = queryString(query, 'flow_id');
  if (flowId !== undefined) {
    if (!(await findFlow(db, accountId, flowId))) throw notFound('flow', flowId, 'flow_id');
    filters.flowId = flowId;
  }
  const email = queryString(query, 'email');
  if (email !== undefined) {
    const normalized = email.trim().toLowerCase();
    if (!normalized || normalized.length > 320) throw invalidParam('email', 'email must be a non-empty email address.');
    filters.email = normalized;
  }
  const status = queryString(query, 'status');
  if (status !== undefined) {
    if (!EVENT_STATUSES.includes(status as EventStatus)) {
      throw invalidParam('status', `status must be one of ${EVENT_STATUSES.join(', ')} (got '${status}').`);
    }
    filters.status = status;
  }
  return { filters, limit };
}

/**
 * GET /v1/events: newest first. next_cursor is the exact sort key (microseconds) of the last event, so events that
 * share a timestamp are neither lost nor repeated across pages.
 */
export async function listEvents(db: Queryable, accountId: string, query: JsonObject): Promise<ListEnvelope<EventRecord>> {
  const { filters, limit } = await parseEventQuery(db, accountId, query);
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
  return record!;
}
