/** SQL of delivery: loading what event actions' sends need, and recording their outcomes on actions and events. */
import type { Queryable } from '../db/db';
import type { RawIdentity } from '../../protocol/identity';

/**
 * Delivery status of an event: `queued` until every action is settled (delivered, failed or skipped), then `failed` if
 * any action failed, else `completed`. A `skipped` action (held back by consent) never makes an event failed.
 */
export type EventStatus = 'queued' | 'completed' | 'failed';

/**
 * SQL for the flow action an event action delivers for (`a` the event action, `f` its event's flow): the one at the
 * action's position while that is still of the action's platform, else the flow's first action of that platform, else
 * null. A flow edited after its event was written (unpublished, its actions reordered or one removed, published again)
 * must never lend one platform's config to another's queued or redelivered action.
 */
export const FLOW_ACTION_OF_EVENT_ACTION = `coalesce(
  case when f.actions_config -> a.position ->> 'integrationId' = a.destination then f.actions_config -> a.position end,
  (select x from jsonb_array_elements(f.actions_config) with ordinality as t(x, i) where x ->> 'integrationId' = a.destination order by i limit 1))`;

/** Everything about one event action that its delivery needs. */
export interface DeliveryRecord {
  action_id: string;
  action_status: string;
  destination: string;
  /** The flow action's config (of the flow's action for this platform: FLOW_ACTION_OF_EVENT_ACTION). */
  action_config: Record<string, unknown> | null;
  event_id: string;
  account_id: string;
  site_id: string;
  site_key: string;
  site_timezone: string;
  trigger: string | null;
  occurred_at: Date;
  event_created_at: Date;
  match_quality: string | null;
  click_ids: Record<string, string> | null;
  event_email: string | null;
  data: Record<string, unknown>;
  customer_event_id: string | null;
  identity: RawIdentity | null;
  /** The paired snapshot's (or the form submission's) touch, platform cookies and page, when there is one. */
  snapshot_touch: { captured_at?: string } | null;
  snapshot_cookies: Record<string, string> | null;
  snapshot_page_url: string | null;
  /** The visitor's user agent and IP address as the collector saw them, and Consent Mode's signals. */
  snapshot_user_agent: string | null;
  snapshot_ip_address: string | null;
  snapshot_consent: { ad_user_data?: string | null; ad_personalization?: string | null } | null;
  /** The event's value (numeric: text from the driver), currency and customer id. */
  value: string | number | null;
  currency: string | null;
  customer_id: string | null;
  /** The account's connection of the destination's type: id and status (credentials are loaded by id when sending). */
  destination_id: string | null;
  destination_status: string | null;
  /**
   * The report's adjustments so far (their row ids, in the order they arrived: seq) and the one it stands at (its
   * retraction if it has one, a retraction being final; else the last to arrive of its restatements not stored
   * superseded, as the platforms end up and the API, the dashboard and the chart show them: standingAdjustment of
   * api/events): a first send carries the conversion as it stands now.
   */
  adjustment_ids: string[];
  latest_adjustment: LatestAdjustment | null;
}

/** A report's latest adjustment, as a send folds it in (see DeliveryRecord.latest_adjustment). */
export interface LatestAdjustment {
  adjustment_id: string;
  type: 'restate' | 'retract';
  value: number | string | null;
  currency: string | null;
}

/** Loads event actions with their event, site, report, snapshot and connection, in one read, by action id. */
export async function loadDeliveryRecords(db: Queryable, eventActionIds: readonly string[]): Promise<Map<string, DeliveryRecord>> {
  if (eventActionIds.length === 0) return new Map();
  const rows = await db.query<DeliveryRecord>(
    `select a.id as action_id, a.status as action_status, a.destination,
            -- the flow action's config, with the conversion id fixed when the event was written
            coalesce((${FLOW_ACTION_OF_EVENT_ACTION}) -> 'config', '{}'::jsonb)
              || case when a.conversion_id is null then '{}'::jsonb
                      else jsonb_build_object('conversion', jsonb_build_object('id', a.conversion_id)) end as action_config,
            e.id as event_id, e.account_id, e.site_id, e.site_key, s.timezone as site_timezone, e.trigger, e.occurred_at,
            e.created_at as event_created_at, e.match_quality, e.click_ids, e.email as event_email, e.data,
            e.value, e.currency, e.customer_id,
            -- a webhook report's, or a form submission's (its submission_id is the stable id of the conversion)
            coalesce(r.customer_event_id, fs.submission_id) as customer_event_id, coalesce(r.identity, fs.fields) as identity,
            -- else what the event kept of them once the snapshot is gone (retention): a later stage that took its click
            -- from its customer's signup event, a conversion sent after a long wait. Never the user agent or IP address.
            coalesce(sn.touch, fs.touch, case when e.data ? 'touch_captured_at' and jsonb_typeof(e.data -> 'touch_captured_at') = 'string'
                                             then jsonb_build_object('captured_at', e.data -> 'touch_captured_at') end) as snapshot_touch,
            coalesce(sn.cookies, fs.cookies, case when jsonb_typeof(e.data -> 'platform_cookies') = 'object' then e.data -> 'platform_cookies' end) as snapshot_cookies,
            coalesce(sn.page_url, fs.page_url, e.data ->> 'page_url') as snapshot_page_url,
            coalesce(sn.user_agent, fs.user_agent) as snapshot_user_agent, coalesce(sn.ip_address, fs.ip_address) as snapshot_ip_address,
            -- the event's copy once the snapshot or submission is gone (retention): a denial outlives its snapshot
            coalesce(sn.consent, fs.consent, e.data -> 'consent') as snapshot_consent,
            d.id as destination_id, d.status as destination_status,
            coalesce((select array_agg(j.id order by j.seq) from adjustments j where j.report_id = e.report_id), '{}') as adjustment_ids,
            (select jsonb_build_object('adjustment_id', j.adjustment_id, 'type', j.type, 'value', j.value, 'currency', j.currency)
             from adjustments j where j.report_id = e.report_id and not j.superseded
             order by j.type = 'retract' desc, j.seq desc limit 1) as latest_adjustment
     from event_actions a
     join events e on e.id = a.event_id
     join sites s on s.id = e.site_id
     left join flows f on f.id = e.flow_id
     left join reports r on r.id = e.report_id
     left join snapshots sn on sn.site_id = e.site_id and sn.correlation_token = e.data ->> 'correlation_token'
     left join form_submissions fs on fs.id = e.data ->> 'form_submission_id'
     left join destinations d on d.account_id = e.account_id and d.type = a.destination
     where a.id = any($1::text[])`,
    [eventActionIds],
  );
  return new Map(rows.map((r) => [r.action_id, r]));
}

/** The error stored on an event action (shown through the API). */
export interface ActionError {
  code: string;
  message: string;
  /** What the user should change, in plain words (permanent failures). */
  hint?: string;
  status?: number;
  /** True while the action is still queued for another attempt. */
  retrying?: boolean;
}

/** The new state of an event action after a send. */
export interface ActionResult {
  actionId: string;
  /** `queued` while it will be tried again; `skipped` when deliberately not sent (the error holds the reason). */
  status: 'delivered' | 'failed' | 'queued' | 'skipped';
  attempts: number;
  /** The error of a failure or of the last failed attempt; null once delivered. */
  error: ActionError | null;
  /** A PII-free summary of what was sent; null keeps what is stored. */
  request: Record<string, unknown> | null;
}

/** Action statuses that are final: nothing more will be sent. */
export const SETTLED_ACTION_STATUSES: readonly string[] = ['delivered', 'failed', 'skipped'];

/**
 * An event's status from its actions' statuses: `queued` while any action is still pending, otherwise `failed` when
 * any action failed, otherwise `completed` (all delivered or skipped, or no actions at all).
 */
export function eventStatusFor(actionStatuses: readonly string[]): EventStatus {
  if (actionStatuses.some((s) => !SETTLED_ACTION_STATUSES.includes(s))) return 'queued';
  if (actionStatuses.some((s) => s === 'failed')) return 'failed';
  return 'completed';
}

/**
 * eventStatusFor in SQL, over the action statuses in `column` (an aggregate: use it with GROUP BY the event). Built from
 * SETTLED_ACTION_STATUSES, so the rule has one definition; no statuses (a left join that found none) is `completed`.
 */
export function eventStatusAggregate(column: string): string {
  const settled = SETTLED_ACTION_STATUSES.map((status) => `'${status}'`).join(', ');
  return `case when bool_or(${column} not in (${settled})) then 'queued' when bool_or(${column} = 'failed') then 'failed' else 'completed' end`;
}

/**
 * Locks events' rows (in id order, so two workers cannot deadlock) until the caller's transaction ends. Whoever changes
 * an action's status and then recomputes its event's status takes this lock first: two actions of one event finishing
 * at once in two processes then cannot both read the other as still pending (the second, once the lock is granted,
 * runs its next statement on a snapshot that holds the first's commit).
 */
export async function lockEvents(tx: Queryable, eventIds: readonly string[]): Promise<void> {
  const ids = [...new Set(eventIds)].sort();
  if (ids.length === 0) return;
  await tx.query('select id from events where id = any($1::text[]) order by id for update', [ids]);
}

/** Recomputes events' statuses from their actions, in the caller's transaction: their rows locked, then one update. */
export async function refreshEventStatuses(tx: Queryable, eventIds: readonly string[]): Promise<void> {
  const ids = [...new Set(eventIds)].sort();
  if (ids.length === 0) return;
  await lockEvents(tx, ids);
  await tx.query(
    `update events e set status = s.status
     from (
       select t.id, ${eventStatusAggregate('a.status')} as status
       from unnest($1::text[]) as t(id) left join event_actions a on a.event_id = t.id
       group by t.id
     ) s
     where e.id = s.id and e.status <> s.status`,
    [ids],
  );
}

/** A delivered action whose platform diagnostics are due (first check, or a recheck of a request still processing). */
export interface DiagnosticsDue {
  action_id: string;
  destination: string;
  platform_request_id: string;
  destination_id: string;
  delivered_at: Date;
}

/**
 * Delivered actions of `types` whose diagnostics are due at `now` (first ones `firstAfterMs` after delivery). The due
 * actions are found first (few: each is asked about once or a few times), then joined to their events and
 * destinations. As one join, the embedded store's planner, which has no statistics of a table as small as
 * `destinations`, expected a few thousand rows where there were 630,000 and read them all: 2.9 s every five minutes
 * with 585,000 actions, 0.21 s so (measured on the embedded store; PostgreSQL was not misled).
 */
export async function dueDiagnostics(db: Queryable, types: readonly string[], now: Date, firstAfterMs: number, limit: number): Promise<DiagnosticsDue[]> {
  if (types.length === 0) return [];
  return db.query<DiagnosticsDue>(
    `with due as materialized (
       select a.id, a.event_id, a.destination, a.request ->> 'platform_request_id' as platform_request_id, a.delivered_at
       from event_actions a
       where a.status = 'delivered' and a.destination = any($1::text[]) and a.request ->> 'platform_request_id' is not null
         and ((a.request -> 'diagnostics' is null and a.delivered_at <= $2::timestamptz)
           or (a.request -> 'diagnostics' ->> 'final' = 'false' and (a.request -> 'diagnostics' ->> 'next_check_at')::timestamptz <= $3::timestamptz))
     )
     select a.id as action_id, a.destination, a.platform_request_id, d.id as destination_id, a.delivered_at
     from due a
     join events e on e.id = a.event_id
     join destinations d on d.account_id = e.account_id and d.type = a.destination
     where d.status = 'connected'
     order by a.delivered_at limit $4`,
    [types, new Date(now.getTime() - firstAfterMs), now, limit],
  );
}

/**
 * Records what the platform said about a request on every action it carried that still holds that request: an action
 * whose event was erased while the platform was asked (the erasure cleared its request summary) gets nothing back.
 */
export async function recordDiagnostics(db: Queryable, actionIds: readonly string[], diagnostics: Record<string, unknown>): Promise<void> {
  if (actionIds.length === 0) return;
  await db.query(
    `update event_actions set request = request || jsonb_build_object('diagnostics', $2::jsonb), updated_at = now()
     where id = any($1::text[]) and request ->> 'platform_request_id' is not null`,
    [actionIds, JSON.stringify(diagnostics)],
  );
}
