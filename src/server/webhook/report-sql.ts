/** SQL for webhook reports (one per site and customer_event_id) and the live flows a report fans out to. */
import { compositeKey } from '../db/composite-key';
import type { Queryable } from '../db/db';
import type { ConversionResponse, SaasSignupResponse } from '../../protocol/webhook';
import type { RawIdentity } from '../../protocol/identity';

/** Raw identity of a report, kept for delivery-time normalisation and hashing; never logged. */
export type ReportIdentity = RawIdentity;

/** What a report is: a signup, or a later stage of a customer. */
export type ReportKind = 'saas_signup' | 'conversion';

/** A report to insert (see report-batch.ts), with the response it is answered with when it is the first of its key. */
export interface NewReport {
  siteId: string;
  customerEventId: string;
  triggerKey: string;
  correlationToken: string | null;
  identity: ReportIdentity;
  allowUncorrelated: boolean;
  /** The conversion's value and currency (both or neither) and the reporter's customer id, as reported. */
  value: number | null;
  currency: string | null;
  customerId: string | null;
  /** `saas_signup`, or `conversion` for a later stage. */
  kind: ReportKind;
  /** A later stage's own time as reported; null when it is the time received. */
  occurredAt: Date | null;
  /** What the report is answered with, stored so that every repeat is answered the same. */
  response: SaasSignupResponse | ConversionResponse;
  /**
   * When it was received, for a report taken in during a burst whose events are built afterwards
   * (deferred-fanout.ts); null or absent: its events are written with it, or it has none.
   */
  fanoutPendingSince?: Date | null;
  /**
   * The keyed hash of its customer_event_id under which an erased report of the site keeps it (ErasedIdHash of
   * src/server/api/erasures): a report whose hash an erased report holds is a retry of it, answered as a repeat and
   * not written (its customer_event_id was replaced by the erasure). Not stored. Absent: not looked for.
   */
  erasedIdHash?: string | null;
}

/** The key of a report in the unique constraint: (site, customer_event_id), as one string. */
export function reportKey(siteId: string, customerEventId: string): string {
  return compositeKey(siteId, customerEventId);
}

/** A stored report as a repeat of its key needs it: its answer, and what it reported to (its kind and trigger key). */
export interface StoredReport {
  response: SaasSignupResponse | null;
  kind: ReportKind;
  triggerKey: string;
}

/** The first reports of these (site, customer_event_id), by reportKey: their answers, kinds and trigger keys. */
export async function findReportResponses(
  db: Queryable,
  keys: ReadonlyArray<{ siteId: string; customerEventId: string }>,
): Promise<Map<string, StoredReport>> {
  return responsesBy(db, 'customer_event_id', keys.map((k) => ({ siteId: k.siteId, value: k.customerEventId })));
}

/**
 * The responses of the reports of these sites whose `column` has these values, by compositeKey(site, value): one
 * statement, through the index on (site_id, column).
 */
async function responsesBy(
  db: Queryable,
  column: 'customer_event_id' | 'erased_id_hash',
  keys: ReadonlyArray<{ siteId: string; value: string }>,
): Promise<Map<string, StoredReport>> {
  if (keys.length === 0) return new Map();
  const rows = await db.query<{ site_id: string; value: string; response: SaasSignupResponse | null; kind: ReportKind; trigger_key: string }>(
    `select r.site_id, r.${column} as value, r.response, r.kind, r.trigger_key from reports r
     join unnest($1::text[], $2::text[]) as k(site_id, value)
       on r.site_id = k.site_id and r.${column} = k.value`,
    [keys.map((k) => k.siteId), keys.map((k) => k.value)],
  );
  return new Map(rows.map((row) => [compositeKey(row.site_id, row.value), { response: row.response, kind: row.kind, triggerKey: row.trigger_key }]));
}

/** The key of findErasedReportResponses' answer: (site, keyed hash of the caller's customer_event_id), as one string. */
export function erasedReportKey(siteId: string, erasedIdHash: string): string {
  return compositeKey(siteId, erasedIdHash);
}

/**
 * The responses of erased reports that keep these keyed hashes of their caller's customer_event_id (NewReport.erasedIdHash),
 * by erasedReportKey: read only for repeats not found by their customer_event_id (index reports_erased_id_hash).
 */
export async function findErasedReportResponses(
  db: Queryable,
  keys: ReadonlyArray<{ siteId: string; erasedIdHash: string }>,
): Promise<Map<string, StoredReport>> {
  return responsesBy(db, 'erased_id_hash', keys.map((k) => ({ siteId: k.siteId, value: k.erasedIdHash })));
}

/** A live flow with an API trigger, as the fan-out needs it. */
export interface FanOutFlow {
  id: string;
  name: string;
  actions_config: unknown;
}

/** The live flows of a site whose API trigger has this key and type, oldest first. Drafts never fire. */
export async function liveFlowsForTrigger(db: Queryable, siteId: string, triggerKey: string, kind: ReportKind = 'saas_signup'): Promise<FanOutFlow[]> {
  return (await liveFlowsForTriggers(db, [{ siteId, triggerKey, kind }])).get(siteTriggerKey(siteId, triggerKey, kind)) ?? [];
}

/** The key of a fan-out in liveFlowsForTriggers' answer: (site, trigger key, trigger type), as one string. */
export function siteTriggerKey(siteId: string, triggerKey: string, kind: ReportKind = 'saas_signup'): string {
  return compositeKey(siteId, triggerKey, kind);
}

/**
 * The live flows of several (site, trigger key, trigger type) in one read, by siteTriggerKey, each list oldest first.
 * A signup report fires the `saas_signup` flows of its key, a later stage the `conversion` flows of its key.
 */
export async function liveFlowsForTriggers(
  db: Queryable,
  triggers: ReadonlyArray<{ siteId: string; triggerKey: string; kind?: ReportKind }>,
): Promise<Map<string, FanOutFlow[]>> {
  const found = new Map<string, FanOutFlow[]>();
  if (triggers.length === 0) return found;
  const rows = await db.query<FanOutFlow & { site_id: string; trigger_key: string; kind: ReportKind }>(
    `select f.site_id, f.trigger_key, k.kind, f.id, f.name, f.actions_config from flows f
     join unnest($1::text[], $2::text[], $3::text[]) as k(site_id, trigger_key, kind)
       on f.site_id = k.site_id and f.trigger_key = k.trigger_key and f.trigger_config ->> 'type' = k.kind
     where f.status = 'live' order by f.seq`,
    [triggers.map((t) => t.siteId), triggers.map((t) => t.triggerKey), triggers.map((t) => t.kind ?? 'saas_signup')],
  );
  for (const { site_id, trigger_key, kind, ...flow } of rows) {
    const key = siteTriggerKey(site_id, trigger_key, kind);
    const list = found.get(key);
    if (list) list.push(flow);
    else found.set(key, [flow]);
  }
  return found;
}

/** The latest signup report of a customer of a site: where a later stage of that customer finds its click. */
export interface SignupOfCustomer {
  /** The stored report's id; null for a signup of the same batch, not stored yet. */
  id: string | null;
  site_id: string;
  customer_id: string;
  customer_event_id: string;
  correlation_token: string | null;
  identity: ReportIdentity;
  /** When the signup was received. */
  created_at: Date;
  /**
   * The visitor's consent its events keep (pairing.ts), or null: a later stage keeps it once the signup's snapshot is
   * gone (its retention), so what the visitor refused stays refused for the customer's later stages.
   */
  consent?: Record<string, unknown> | null;
  /**
   * What the signup's first paired event keeps of its click (its match quality, click ids and data: the touch's time,
   * page, UTM, platform cookies, consent), or null when none was paired (yet): a later stage takes its click from here
   * once the signup's snapshot is gone (its retention, 30 days by default), as the event keeps its click ids.
   */
  paired?: PairedSignupEvent | null;
}

/** A signup's paired event, as a later stage takes its click from it (SignupOfCustomer.paired). */
export interface PairedSignupEvent {
  match_quality: string;
  click_ids: Record<string, string> | null;
  data: Record<string, unknown>;
}

/** The key of a later stage's search for its signup: (site, customer_id, the latest time the signup may have). */
export function customerKey(siteId: string, customerId: string, before: Date): string {
  return compositeKey(siteId, customerId, before.toISOString());
}

/**
 * The latest signup report of each (site, customer_id) received at or before `before` (the stage's own time: a signup
 * after the stage cannot hold the click that led to it), by customerKey (index reports_site_customer).
 */
export async function findLatestSignups(
  db: Queryable,
  keys: ReadonlyArray<{ siteId: string; customerId: string; before: Date }>,
): Promise<Map<string, SignupOfCustomer>> {
  if (keys.length === 0) return new Map();
  const rows = await db.query<SignupOfCustomer & { before: Date }>(
    `select k.before, s.* from unnest($1::text[], $2::text[], $3::timestamptz[]) as k(site_id, customer_id, before)
     cross join lateral (
       select r.id, r.site_id, r.customer_id, r.customer_event_id, r.correlation_token, r.identity, r.created_at,
         (select e.data -> 'consent' from events e where e.report_id = r.id and e.data ? 'consent' limit 1) as consent,
         (select jsonb_build_object('match_quality', e.match_quality, 'click_ids', e.click_ids, 'data', e.data) from events e
          where e.report_id = r.id and e.erased_at is null and e.match_quality is not null and e.data ->> 'match_reason' = 'paired'
          order by e.created_at, e.id limit 1) as paired
       from reports r
       where r.site_id = k.site_id and r.customer_id = k.customer_id and r.kind = 'saas_signup' and r.created_at <= k.before
       order by r.created_at desc limit 1
     ) s`,
    [keys.map((k) => k.siteId), keys.map((k) => k.customerId), keys.map((k) => k.before)],
  );
  return new Map(rows.map(({ before, ...row }) => [customerKey(row.site_id, row.customer_id, new Date(before)), row]));
}

/**
 * How many reports of an account's sites wait for their events (stored during a burst, see deferred-fanout.ts): the
 * dashboard's Events page says so.
 */
export async function reportsAwaitingEvents(db: Queryable, accountId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    // From the queue (a few rows, or a burst's) to its reports by id: as a join, PostgreSQL read the whole reports table
    // into a hash on every view of the Events page (23 ms at 30,000 reports on the embedded store, 150 ms at 300,000
    // before the first analyze), against 0.2 to 0.5 ms this way.
    `select count(*)::int as n from reports r join sites s on s.id = r.site_id
     where r.id = any(array(select f.report_id from report_fanouts f)) and s.account_id = $1`,
    [accountId],
  );
  return row?.n ?? 0;
}
