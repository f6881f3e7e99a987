/**
 * SQL of the webhook's group commit: a batch of reports with their events, event actions and outbox rows, written in
 * ONE statement (data-modifying CTEs), because on the embedded PGlite each statement has a fixed cost of about half a
 * millisecond of its thread, whatever its size.
 */
import type { Queryable } from '../db/db';
import { compareText } from '../db/composite-key';
import { newId } from '../db/ids';
import { insertEvents, type NewEvent } from '../fanout';
import type { EventStatus } from '../delivery';
import { reportKey, type NewReport, type ReportIdentity } from './report-sql';

/**
 * What a report's planning read from other rows that an erasure may remove meanwhile (planReports reads, then one
 * statement writes: an erasure can commit in between). The write checks each is still as read (BASIS_HOLDS).
 */
export interface ReportBasis {
  /** The stored snapshot whose click, touch and cookies the report's events carry (its id), or null. */
  snapshotId: string | null;
  /** The stored signup whose identity and token a later stage took (as read), or null. */
  signup: { id: string; correlationToken: string | null; identity: ReportIdentity } | null;
}

/** A report to record with the events it fans out to (their reportId is filled in here). */
export interface ReportWithEvents extends NewReport {
  events: ReadonlyArray<Omit<NewEvent, 'reportId'>>;
  /** A stored report whose events are built now (deferred-fanout.ts): its id. */
  id?: string;
  /** When its events count as recorded (events.created_at; the pairing window runs from here); absent: now. */
  eventsRecordedAt?: Date;
  /** What its planning read from other rows (see ReportBasis); absent: nothing. */
  basis?: ReportBasis;
}

/**
 * What a write did, by reportKey: the reports inserted (or, `existing`, built) with their ids, and the reports left
 * out because what their planning read changed meanwhile (`stale`: see BASIS_HOLDS), which the caller plans again.
 * A report in neither is a repeat (or, `existing`, one another writer builds or an erasure took off the queue).
 */
export interface ReportWriteResult {
  inserted: Map<string, string>;
  stale: Set<string>;
}

/** How insertReportsWithEvents writes: see there. */
export interface ReportWriteMode {
  alone?: boolean;
  /**
   * The reports are stored already, waiting for their events (deferred-fanout.ts): instead of inserting them, the
   * statement takes each one still waiting (its id given), marks it built and writes its events. A report another
   * writer is building at that moment (a second process on one PostgreSQL) is skipped, not waited for: it is not
   * among the reports returned, and none of its events are written.
   */
  existing?: boolean;
}

function eventStatus(event: NewEvent): EventStatus {
  return event.actions.length > 0 ? 'queued' : 'completed';
}

/** The fields of the reports' JSON document. */
const REPORT_FIELDS = `id text, site_id text, customer_event_id text, trigger_key text, correlation_token text, identity jsonb,
         allow_uncorrelated boolean, response jsonb, value numeric, currency text, customer_id text, kind text, occurred_at timestamptz,
         fanout_pending_since timestamptz, erased_id_hash text, basis_snapshot_id text, basis_signup_id text,
         basis_signup_token text, basis_signup_identity jsonb, n int`;

/**
 * The test that keeps a report out when its site has an erased report of the same caller id (NewReport.erasedIdHash):
 * one probe per report of a partial index that holds erased reports only. A scalar subquery, not NOT EXISTS: that one
 * PostgreSQL turns into an anti-join that reads the whole reports table (test/server/plans-at-scale.test.ts).
 */
const NOT_ERASED = `(select 1 from reports x where x.site_id = t.site_id and x.erased_id_hash = t.erased_id_hash
         and x.erased_id_hash is not null limit 1) is null`;

/**
 * The test that what a report's planning read from other rows still holds (ReportWithEvents.basis): the snapshot whose
 * click its events carry is still stored, and the signup whose identity and token a later stage took still holds them
 * under the stage's customer id. An erasure removes both (it deletes the snapshot; it clears the signup's identity,
 * token and customer id), and one that committed between the planning and the write would otherwise see its person's
 * email and click written again, and sent, after it answered. This statement runs wholly after such an erasure or
 * before it (it writes to a table the erasure locks against writes: reports, or report_fanouts for `existing`), so a
 * report whose basis is gone is left out and planned again (ReportWriteResult.stale). Scalar subqueries by primary
 * key, as NOT_ERASED.
 */
const BASIS_HOLDS = `(t.basis_snapshot_id is null
         or (select 1 from snapshots s where s.id = t.basis_snapshot_id::bigint) is not null)
       and (t.basis_signup_id is null
         or (select 1 from reports x where x.id = t.basis_signup_id and x.customer_id = t.customer_id
           and x.correlation_token is not distinct from t.basis_signup_token and x.identity = t.basis_signup_identity) is not null)`;

/**
 * The text of the error an insertion `alone` raises when an event of a report it inserts found its slot taken: the
 * statement then fails whole, nothing of it is written, and the caller runs it again in a transaction, where the
 * stepping path of insertEvents can follow it.
 */
export const EVENT_SLOT_TAKEN = 'cnv: an event slot was taken meanwhile';

/** Whether a database error is the one an insertion `alone` raises when an event's slot was taken. */
export function isEventSlotTaken(error: unknown): boolean {
  return error instanceof Error && error.message.includes(EVENT_SLOT_TAKEN);
}

/**
 * Inserts reports, each unless its site already has one with its customer_event_id (or an erased one that was given
 * it: NewReport.erasedIdHash), and for each report inserted its
 * events, their actions and their outbox rows; a repeat's events are not written. Returns the ids of the reports
 * inserted, by reportKey. Keys must be distinct within one call.
 *
 * sort_at follows insertEvents' rule: an event takes the count of its account's events already in its millisecond plus
 * its rank among the batch's events of that millisecond. An event whose slot another writer took meanwhile (a second
 * process on one PostgreSQL) is not written by this statement; it then goes through insertEvents, which steps to the
 * next free slot. Reports go in in key order and events in (account, time) order, so concurrent writers take the
 * unique indexes' locks in one order.
 *
 * `alone`: the statement is the whole write, outside any transaction (one statement commits atomically by itself, one
 * round trip to the database instead of three with BEGIN and COMMIT). It then cannot follow up an event whose slot was
 * taken, so such an event makes the statement fail whole with EVENT_SLOT_TAKEN (nothing written) instead.
 *
 * Reports without any event (a burst's, stored first: see NewReport.fanoutPendingSince; or reports that fire no
 * flow) go in by a statement of their own, the reports alone and the queue of those waiting for their events: a third
 * of the full statement's cost on the embedded store. `existing` (see ReportWriteMode): stored reports get their events.
 *
 * A report whose basis changed since it was planned (BASIS_HOLDS) is not written, nor are its events: it is returned
 * as stale, for the caller to plan again.
 */
export async function insertReportsWithEvents(tx: Queryable, reports: readonly ReportWithEvents[], { alone = false, existing = false }: ReportWriteMode = {}): Promise<ReportWriteResult> {
  if (reports.length === 0) return { inserted: new Map(), stale: new Set() };
  const sorted = [...reports]
    .map((report) => ({ report, key: reportKey(report.siteId, report.customerEventId), id: existing ? report.id! : newId('rpt') }))
    .sort((a, b) => compareText(a.key, b.key));
  const events = sorted
    .flatMap(({ report, id }) => report.events.map((event): NewEvent & { id: string; recordedAt: Date | null } => ({
      ...event, reportId: id, id: newId('evt'), recordedAt: report.eventsRecordedAt ?? null,
    })))
    .sort((a, b) => compareText(a.accountId, b.accountId) || a.occurredAt.getTime() - b.occurredAt.getTime());
  const actions = events.flatMap((event) =>
    event.actions.map((action, position) => ({ id: newId('act'), eventId: event.id, position, action, dueAt: event.deliverAt ?? new Date() })),
  );

  // Each table's rows go as one JSON document of named fields (n: the row's place, for the insert order).
  const reportsDocument = JSON.stringify(sorted.map(({ id, report: r }, n) => ({
    n, id, site_id: r.siteId, customer_event_id: r.customerEventId, trigger_key: r.triggerKey, correlation_token: r.correlationToken,
    identity: r.identity, allow_uncorrelated: r.allowUncorrelated, response: r.response,
    value: r.value, currency: r.currency, customer_id: r.customerId, kind: r.kind, occurred_at: r.occurredAt,
    fanout_pending_since: r.fanoutPendingSince ?? null, erased_id_hash: r.erasedIdHash ?? null,
    basis_snapshot_id: r.basis?.snapshotId ?? null, basis_signup_id: r.basis?.signup?.id ?? null,
    basis_signup_token: r.basis?.signup?.correlationToken ?? null, basis_signup_identity: r.basis?.signup?.identity ?? null,
  })));
  const keyOfId = new Map(sorted.map((s) => [s.id, s.key]));
  const result = (rows: ReadonlyArray<{ kind: string; id: string }>): ReportWriteResult => ({
    inserted: new Map(rows.flatMap((row) => (row.kind === 'report' ? [[keyOfId.get(row.id)!, row.id] as const] : []))),
    stale: new Set(rows.flatMap((row) => (row.kind === 'stale' ? [keyOfId.get(row.id)!] : []))),
  });
  if (!existing && events.length === 0) {
    // Reports without events (a burst's, whose events are built later, or reports that fire no flow): the reports
    // alone, and the queue of those waiting for their events.
    const written = await tx.query<{ kind: 'report' | 'stale'; id: string }>(
      `with t as materialized (select *, ${BASIS_HOLDS} as holds from json_to_recordset($1::json) as t(${REPORT_FIELDS})),
       r as (
         insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity, allow_uncorrelated, response,
           value, currency, customer_id, kind, occurred_at)
         select id, site_id, customer_event_id, trigger_key, correlation_token, identity, allow_uncorrelated, response,
           value, currency, customer_id, kind, occurred_at
         from t where t.holds and ${NOT_ERASED} order by n
         on conflict (site_id, customer_event_id) do nothing
         returning id
       ),
       f as (
         -- Reports stored during a burst that wait for their events (deferred-fanout.ts).
         insert into report_fanouts (report_id, received_at)
         select t.id, t.fanout_pending_since from t join r on r.id = t.id where t.fanout_pending_since is not null
       )
       select 'report' as kind, id from r union all select 'stale' as kind, id from t where not t.holds`,
      [reportsDocument],
    );
    return result(written);
  }
  const rows = await tx.query<{ kind: 'report' | 'event' | 'slots' | 'stale'; id: string }>(
    `with t as materialized (
       -- The reports' rows, each with whether its basis holds (read once though two parts of the statement use it).
       select *, ${BASIS_HOLDS} as holds from json_to_recordset($1::json) as t(${REPORT_FIELDS})
     ),
     te as materialized (
       -- The events' and the actions' rows, each document parsed once though two parts of the statement read it.
       select * from json_to_recordset($2::json) as t(id text, account_id text, site_id text, site_key text,
         flow_id text, flow_name text, report_id text, trigger text, occurred_at timestamptz, status text, match_quality text,
         email text, click_ids jsonb, data jsonb, value numeric, currency text, customer_id text, created_at timestamptz, n int)
     ),
     ta as materialized (
       select * from json_to_recordset($3::json) as t(id text, event_id text, position int, destination text, conversion_id text,
         due_at timestamptz)
     ),
     r as (${existing ? `
       -- Stored reports still waiting for their events, locked in id order; one another writer holds is skipped. (By
       -- arrays of ids, so that both lookups go by the primary key whatever the planner thinks of a young table.)
       delete from report_fanouts f
       where f.report_id = any(array(
         select q.report_id from report_fanouts q
         where q.report_id = any(array(select t.id from t where t.holds))
         order by q.report_id for update skip locked))
       returning f.report_id as id` : `
       insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity, allow_uncorrelated, response,
         value, currency, customer_id, kind, occurred_at)
       select id, site_id, customer_event_id, trigger_key, correlation_token, identity, allow_uncorrelated, response,
         value, currency, customer_id, kind, occurred_at
       from t
       where t.holds and ${NOT_ERASED}
       order by n
       on conflict (site_id, customer_event_id) do nothing
       returning id`}
     ),
     e as (
       insert into events (id, account_id, site_id, site_key, flow_id, flow_name, report_id, trigger, occurred_at, sort_at,
         status, match_quality, email, click_ids, data, value, currency, customer_id, created_at)
       select t.id, t.account_id, t.site_id, t.site_key, t.flow_id, t.flow_name, t.report_id, t.trigger, t.occurred_at,
         date_trunc('milliseconds', t.occurred_at) + make_interval(secs => (c.taken - 1 + row_number() over (
           partition by t.account_id, date_trunc('milliseconds', t.occurred_at) order by t.n)) / 1000000.0),
         t.status, t.match_quality, t.email, t.click_ids, t.data, t.value, t.currency, t.customer_id, coalesce(t.created_at, now())
       from te as t
       join r on r.id = t.report_id
       cross join lateral (
         select count(*)::int as taken from events x where x.account_id = t.account_id
           and x.sort_at >= date_trunc('milliseconds', t.occurred_at)
           and x.sort_at < date_trunc('milliseconds', t.occurred_at) + interval '1 millisecond'
       ) c
       order by t.n
       on conflict (account_id, sort_at) do nothing
       returning id
     ),
     a as (
       insert into event_actions (id, event_id, position, destination, conversion_id)
       select t.id, t.event_id, t.position, t.destination, t.conversion_id
       from ta as t
       join e on e.id = t.event_id
       returning id
     ),
     o as (
       -- The delivery worker's outbox rows (see outbox.ts), one per action, due at its event's deliverAt.
       insert into outbox (event_action_id, due_at)
       select t.id, t.due_at from ta as t join a on a.id = t.id
     )${alone ? `,
     -- Alone: every event of an inserted report has its slot, or the statement fails (a cast of a non-constant text,
     -- so that PostgreSQL cannot fold it at planning).
     slots as (
       select (case when (select count(*) from e) = (select count(*) from te as t join r on r.id = t.report_id)
         then '0' else '${EVENT_SLOT_TAKEN}' end)::int as missing
     )` : ''}
     select 'report' as kind, id from r union all select 'event' as kind, id from e
     union all select 'stale' as kind, id from t where not t.holds${alone ? `
     union all select 'slots' as kind, missing::text from slots` : ''}`,
    [
      reportsDocument,
      JSON.stringify(events.map((e, n) => ({
        n, id: e.id, account_id: e.accountId, site_id: e.siteId, site_key: e.siteKey, flow_id: e.flowId, flow_name: e.flowName,
        report_id: e.reportId, trigger: e.trigger, occurred_at: e.occurredAt, status: eventStatus(e),
        match_quality: e.matchQuality, email: e.email?.trim().toLowerCase() || null, click_ids: e.clickIds, data: e.data,
        value: e.value ?? null, currency: e.currency ?? null, customer_id: e.customerId ?? null, created_at: e.recordedAt,
      }))),
      JSON.stringify(actions.map((a) => ({
        id: a.id, event_id: a.eventId, position: a.position, destination: a.action.destination, conversion_id: a.action.conversionId, due_at: a.dueAt,
      }))),
    ],
  );

  const insertedReports = new Set<string>();
  const insertedEvents = new Set<string>();
  for (const row of rows) if (row.kind === 'report' || row.kind === 'event') (row.kind === 'report' ? insertedReports : insertedEvents).add(row.id);
  // Events of inserted reports that lost their slot to another writer: the stepping path of insertEvents. (Alone,
  // there are none: the statement fails instead, see `slots`.)
  const bumped = events.filter((e) => insertedReports.has(e.reportId!) && !insertedEvents.has(e.id));
  if (bumped.length > 0) await insertEvents(tx, bumped.map(({ id: _id, recordedAt: _recordedAt, ...event }) => event));
  return result(rows);
}
