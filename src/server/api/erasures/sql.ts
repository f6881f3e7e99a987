/**
 * SQL of erasures: finding everything stored of one person in an account (reports, form submissions, events, snapshots),
 * anonymising it, and the audit list. The finders return candidates by a coarse SQL test; the caller confirms each with
 * the one normalisation of src/protocol/identity.ts, so SQL never holds a second copy of those rules.
 */
import type { Queryable } from '../../db/db';
import type { PageRequest, PageResult } from '../../http/pagination';
import { selectPageBySeq } from '../../db/keyset';
import { SETTLED_ACTION_STATUSES, eventStatusAggregate } from '../../delivery';
import { TRUNK_PREFIX, type RawIdentity } from '../../../protocol/identity';

/** How a person is looked for: normalised values (email lower-cased, phone E.164 and its digits). */
export interface ErasureProbe {
  email: string | null;
  phone: string | null;
  /** Matched exactly, on reports and events. */
  customerId: string | null;
  /** The E.164 phone's digits, without the `+`. */
  phoneDigits: string | null;
}

/** A stored row holding raw identity fields, as a candidate for confirmation. */
export interface IdentityCandidate {
  id: string;
  identity: RawIdentity;
  /** Matched already in SQL (by customer_id): no identity to confirm. */
  confirmed?: boolean;
}

/**
 * Takes the write locks that make an erasure one step in time: a report, snapshot or form submission of the same
 * person commits wholly before the erasure reads (and is erased) or waits until it has committed (and is kept).
 * `report_fanouts` too: the build of a burst's report (deferred-fanout.ts) writes events from a report it read
 * earlier, in a statement that touches no other table here; it then either commits before the erasure looks for the
 * person's events (which finds them) or runs after it, when an erased report is off the queue and nothing is built.
 * SHARE ROW EXCLUSIVE blocks inserts, updates and deletes of those tables (and other erasures), never readers.
 */
export async function lockPersonalDataWrites(tx: Queryable): Promise<void> {
  await tx.query('lock table snapshots, form_submissions, reports, report_fanouts in share row exclusive mode');
}

/**
 * The coarse test of a jsonb column of raw identity fields, `$2` the email, `$3` the phone's digits. A stored phone's
 * digits are compared without a trunk prefix in parentheses (`+44 (0)20 …`: TRUNK_PREFIX, the same pattern in SQL).
 */
function identityTest(column: string): string {
  return `(($2::text is not null and strpos(lower(${column} ->> 'email'), $2::text) > 0)
    or ($3::text is not null and regexp_replace(regexp_replace(${column} ->> 'phone', '${TRUNK_PREFIX.source}', '', 'g'), '[^0-9]', '', 'g')
      in ($3::text, '00' || $3::text)))`;
}

/** Reports of the account's sites whose identity may hold the email or phone. */
export async function reportCandidates(tx: Queryable, accountId: string, probe: ErasureProbe): Promise<IdentityCandidate[]> {
  if (!probe.email && !probe.phone && !probe.customerId) return [];
  // A report of the customer_id is the person's whatever its identity holds (confirmed).
  return tx.query<IdentityCandidate>(
    `select r.id, r.identity, ($4::text is not null and r.customer_id is not distinct from $4::text) as confirmed
     from reports r join sites s on s.id = r.site_id
     where s.account_id = $1 and (${identityTest('r.identity')} or ($4::text is not null and r.customer_id = $4::text))`,
    [accountId, probe.email, probe.phoneDigits, probe.customerId],
  );
}

/**
 * The customer ids the person's reports and events carry, and the account's reports of those ids: a later stage
 * reported with the customer_id alone (no email) is the same person's, and carries the signup's click.
 */
export async function customerIdsOf(tx: Queryable, reportIds: readonly string[], eventIds: readonly string[]): Promise<string[]> {
  if (reportIds.length === 0 && eventIds.length === 0) return [];
  const rows = await tx.query<{ customer_id: string }>(
    `select customer_id from reports where id = any($1::text[]) and customer_id is not null
     union select customer_id from events where id = any($2::text[]) and customer_id is not null`,
    [reportIds, eventIds],
  );
  return rows.map((r) => r.customer_id);
}

/** The raw identity fields the person's reports, form submissions and events hold (an event: its email). */
export async function storedIdentities(
  tx: Queryable,
  reportIds: readonly string[],
  submissionIds: readonly string[],
  eventIds: readonly string[],
): Promise<RawIdentity[]> {
  const rows = await tx.query<{ identity: RawIdentity }>(
    `select identity from reports where id = any($1::text[])
     union all select fields from form_submissions where id = any($2::text[])
     union all select jsonb_build_object('email', email) from events where id = any($3::text[]) and email is not null`,
    [reportIds, submissionIds, eventIds],
  );
  return rows.map((r) => r.identity);
}

/** The account's reports of some customer ids. */
export async function reportsOfCustomers(tx: Queryable, accountId: string, customerIds: readonly string[]): Promise<string[]> {
  if (customerIds.length === 0) return [];
  const rows = await tx.query<{ id: string }>(
    `select r.id from reports r join sites s on s.id = r.site_id where s.account_id = $1 and r.customer_id = any($2::text[])`,
    [accountId, customerIds],
  );
  return rows.map((r) => r.id);
}

/** Form submissions of the account's sites whose fields may hold the email or phone. */
export async function formSubmissionCandidates(tx: Queryable, accountId: string, probe: ErasureProbe): Promise<IdentityCandidate[]> {
  if (!probe.email && !probe.phone) return [];
  return tx.query<IdentityCandidate>(
    `select f.id, f.fields as identity from form_submissions f join sites s on s.id = f.site_id
     where s.account_id = $1 and ${identityTest('f.fields')}`,
    [accountId, probe.email, probe.phoneDigits],
  );
}

/** An event of the person, with what links it to reports, form submissions and snapshots. */
export interface LinkedEvent {
  id: string;
  site_id: string;
  report_id: string | null;
  form_submission_id: string | null;
  correlation_token: string | null;
}

/**
 * The account's events of the email (stored lower-cased), of any of the reports, or of any of the form submissions.
 */
export async function linkedEvents(
  tx: Queryable,
  accountId: string,
  email: string | null,
  customerIds: readonly string[],
  reportIds: readonly string[],
  formSubmissionIds: readonly string[],
): Promise<LinkedEvent[]> {
  return tx.query<LinkedEvent>(
    `select id, site_id, report_id, data ->> 'form_submission_id' as form_submission_id, data ->> 'correlation_token' as correlation_token
     from events
     where account_id = $1 and (($2::text is not null and email = $2::text) or report_id = any($3::text[])
       or (data ->> 'form_submission_id') = any($4::text[]) or customer_id = any($5::text[]))`,
    [accountId, email, reportIds, formSubmissionIds, customerIds],
  );
}

/** Snapshot keys (site, token) of some reports. */
export async function reportTokens(tx: Queryable, reportIds: readonly string[]): Promise<Array<{ site_id: string; token: string }>> {
  if (reportIds.length === 0) return [];
  return tx.query(
    'select site_id, correlation_token as token from reports where id = any($1::text[]) and correlation_token is not null',
    [reportIds],
  );
}

/**
 * Deletes the snapshots of these correlation tokens in every site of the account: the visitor's IP address, user agent,
 * touch and cookies go whole. A token is 16 random bytes, one browser's journey: `data-linker` carries it to the
 * account's site on another domain, where an intent before the one reported left a snapshot of its own.
 */
export async function deleteSnapshots(tx: Queryable, accountId: string, tokens: readonly string[]): Promise<number> {
  if (tokens.length === 0) return 0;
  const rows = await tx.query(
    `delete from snapshots s
     where s.site_id = any(array(select id from sites where account_id = $1)) and s.correlation_token = any($2::text[])
     returning s.id`,
    [accountId, [...new Set(tokens)]],
  );
  return rows.length;
}

/**
 * Anonymises reports: no identity, no correlation token (a late snapshot pairs with nothing), and a customer_event_id
 * that holds an erased value replaced (`renamed`: id to its replacement). A report stored during a burst and still
 * waiting for its events gets none (as an erased event's unsent actions are taken out of the outbox). The row stays,
 * with the keyed hash of its caller's customer_event_id (`hashes`, by id; one kept from an earlier erasure stays), so
 * a retry of the same report is still answered as a repeat and writes nothing new (report-batch-sql.ts).
 */
export async function anonymiseReports(
  tx: Queryable,
  ids: readonly string[],
  renamed: ReadonlyMap<string, string>,
  hashes: ReadonlyMap<string, string> = new Map(),
): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await tx.query(
    `with unbuilt as (delete from report_fanouts where report_id = any($1::text[]))
     update reports r set identity = '{}'::jsonb, correlation_token = null, customer_id = null,
       customer_event_id = coalesce(k.renamed, r.customer_event_id),
       erased_id_hash = coalesce(r.erased_id_hash, k.hash),
       response = case when k.renamed is null then r.response else jsonb_set(r.response, '{customer_event_id}', to_jsonb(k.renamed)) end
     from unnest($1::text[], $2::text[], $3::text[]) as k(id, renamed, hash)
     where r.id = k.id returning r.id`,
    [ids, ids.map((id) => renamed.get(id) ?? null), ids.map((id) => hashes.get(id) ?? null)],
  );
  return rows.length;
}

/** The customer_event_id of some reports, by report id, with their site. */
export async function reportEventIds(tx: Queryable, ids: readonly string[]): Promise<Array<{ id: string; site_id: string; customer_event_id: string }>> {
  if (ids.length === 0) return [];
  return tx.query('select id, site_id, customer_event_id from reports where id = any($1::text[])', [ids]);
}

/** Anonymises form submissions: fields, touch, cookies, consent, page, referrer, user agent and IP address cleared. */
export async function anonymiseFormSubmissions(tx: Queryable, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await tx.query(
    `update form_submissions set fields = '{}'::jsonb, touch = null, cookies = '{}'::jsonb, consent = null, page_url = '',
       referrer = null, user_agent = null, ip_address = null
     where id = any($1::text[]) returning id`,
    [ids],
  );
  return rows.length;
}

/** The error an action not yet sent carries once its event is erased. */
/** The error code of an action that an erasure stopped (never sent, or its send's outcome never written). */
export const ERASED_ERROR_CODE = 'erased';

export const ERASED_ACTION_ERROR = {
  code: ERASED_ERROR_CODE,
  message: "Not sent: the person's data was erased (an erasure request) before this conversion was delivered.",
};

/** The error of an action whose send was under way when its event was erased: the platform may have it. */
export const ERASED_IN_FLIGHT_ERROR = {
  code: ERASED_ERROR_CODE,
  message:
    "The person's data was erased while this conversion was being sent: the platform may have received it. cnv keeps no " +
    "record of what was sent; the platform's own deletion path applies (docs/personal-data.md).",
};

/**
 * What an erased event's stored errors keep: the code, the HTTP status and our hint; the message goes, since a
 * platform's message may quote what it was sent (a click id).
 */
const SCRUBBED_ERROR = (column: string) => `case when ${column} is null then null else jsonb_strip_nulls(jsonb_build_object(
  'code', ${column} -> 'code', 'status', ${column} -> 'status', 'hint', ${column} -> 'hint', 'retrying', ${column} -> 'retrying',
  'message', 'The message was removed with the person''s data (an erasure request).')) end`;

/**
 * Anonymises events and what delivery recorded of them: each action's and attempt's request summary (hashed
 * identifiers identify too) goes; actions not settled yet are taken out of the outbox and marked failed with the reason
 * (a settled one, delivered, failed or skipped, keeps its status and its error code).
 * The event keeps only what identifies no one (`keep` keys of its data; a renamed customer_event_id replaced).
 * The events' rows are locked first, in id order, as the delivery worker (lockEvents) and a redelivery lock them
 * before their actions: a redelivery that took an event first commits before the outbox and the actions are read
 * here (what it queued is then cancelled), and one that comes after finds the event erased.
 */
export async function anonymiseEvents(
  tx: Queryable,
  ids: readonly string[],
  keep: readonly string[],
  renamed: ReadonlyMap<string, string>,
  now: Date,
): Promise<number> {
  if (ids.length === 0) return 0;
  await tx.query('select id from events where id = any($1::text[]) order by id for update', [[...ids].sort()]);
  // A row still leased is a send under way: its outcome is never written (the lease is gone with the row), and the
  // action says the platform may have it.
  const inFlight = await tx.query<{ event_action_id: string; in_flight: boolean }>(
    `delete from outbox o using event_actions a where a.id = o.event_action_id and a.event_id = any($1::text[])
     returning o.event_action_id, (o.locked_until is not null and o.locked_until > $2::timestamptz) as in_flight`,
    [ids, now],
  );
  await tx.query(
    `update event_actions set request = null,
       status = case when status = any($6::text[]) then status else 'failed' end,
       error = case when status = any($6::text[]) then ${SCRUBBED_ERROR('error')}
                    when id = any($4::text[]) then $5::jsonb else $2::jsonb end,
       updated_at = $3
     where event_id = any($1::text[])`,
    [
      ids,
      JSON.stringify(ERASED_ACTION_ERROR),
      now,
      inFlight.filter((r) => r.in_flight).map((r) => r.event_action_id),
      JSON.stringify(ERASED_IN_FLIGHT_ERROR),
      SETTLED_ACTION_STATUSES,
    ],
  );
  await tx.query(
    `update delivery_attempts d set request = null, error = ${SCRUBBED_ERROR('d.error')} from event_actions a
     where a.id = d.event_action_id and a.event_id = any($1::text[])`,
    [ids],
  );
  // Adjustments of those actions: what was sent goes; one still queued (or under way: its lease goes too) is not sent.
  await tx.query(
    `update adjustment_results r set request = null, error = ${SCRUBBED_ERROR('r.error')}, locked_until = null,
       status = case when r.status = 'queued' then 'failed' else r.status end,
       reason = case when r.status = 'queued' and r.locked_until > $4::timestamptz then $5
                     when r.status = 'queued' then $2 when r.status = 'failed' then $3 else r.reason end,
       updated_at = $4
     from event_actions a where a.id = r.event_action_id and a.event_id = any($1::text[])`,
    [
      ids,
      "Not sent: the person's data was erased (an erasure request) before this adjustment was sent.",
      "It failed; the reason was removed with the person's data (an erasure request).",
      now,
      "The person's data was erased while this adjustment was being sent: the platform may have applied it. cnv keeps no record of what was sent.",
    ],
  );
  // Notifications about those events: ids and a reason; the reason may quote a platform's message, so it goes.
  await tx.query(
    `update notifications set payload = jsonb_set(payload, '{data,reason}', to_jsonb($2::text))
     where account_id in (select account_id from events where id = any($1::text[]))
       and payload -> 'data' ->> 'event_id' = any($1::text[]) and payload -> 'data' ? 'reason'`,
    [ids, "The delivery failed for good; its details were removed with the person's data (an erasure request)."],
  );
  const rows = await tx.query(
    `update events e set email = null, click_ids = null, customer_id = null, erased_at = $3,
       data = (select coalesce(jsonb_object_agg(key, value), '{}'::jsonb) from jsonb_each(e.data) where key = any($2::text[]))
         || case when k.renamed is null then '{}'::jsonb else jsonb_build_object('customer_event_id', k.renamed) end
         || '{"erased": true}'::jsonb,
       status = case when e.status = 'queued' then (
         select ${eventStatusAggregate('a.status')} from event_actions a where a.event_id = e.id
       ) else e.status end
     from unnest($1::text[], $4::text[]) as k(id, renamed)
     where e.id = k.id returning e.id`,
    [ids, keep, now, ids.map((id) => renamed.get(id) ?? null)],
  );
  return rows.length;
}

/** The adjustments of some reports, their caller's adjustment_id as `customer_event_id` (renamed the same way). */
export async function reportAdjustmentIds(tx: Queryable, reportIds: readonly string[]): Promise<Array<{ id: string; site_id: string; customer_event_id: string }>> {
  if (reportIds.length === 0) return [];
  return tx.query('select id, site_id, adjustment_id as customer_event_id from adjustments where report_id = any($1::text[])', [reportIds]);
}

/**
 * Marks adjustments erased: each keeps the keyed hash of its caller's adjustment_id (`hashes`, by id; one kept from an
 * earlier erasure stays), and one that holds an erased value is replaced (`renamed`). A retry of it is still a repeat.
 */
export async function anonymiseAdjustments(tx: Queryable, renamed: ReadonlyMap<string, string>, hashes: ReadonlyMap<string, string>): Promise<void> {
  if (hashes.size === 0) return;
  const ids = [...hashes.keys()];
  await tx.query(
    `update adjustments j set adjustment_id = coalesce(k.renamed, j.adjustment_id), erased_id_hash = coalesce(j.erased_id_hash, k.hash)
     from unnest($1::text[], $2::text[], $3::text[]) as k(id, renamed, hash) where j.id = k.id`,
    [ids, ids.map((id) => renamed.get(id) ?? null), ids.map((id) => hashes.get(id)!)],
  );
}

/** The customer_event_id held in some events' data, by event id, with what its replacement is made of. */
export async function eventCustomerEventIds(tx: Queryable, ids: readonly string[]): Promise<Array<{ id: string; customer_event_id: string; key: string }>> {
  if (ids.length === 0) return [];
  // key: what its replacement is made of, its report's id (the report's replacement is the same).
  return tx.query(
    `select id, data ->> 'customer_event_id' as customer_event_id, coalesce(report_id, id) as key from events
     where id = any($1::text[]) and data ->> 'customer_event_id' is not null`,
    [ids],
  );
}

/** What an erasure matched. */
export interface ErasureCounts {
  reports: number;
  events: number;
  snapshots: number;
  form_submissions: number;
}

/** An erasure as stored (never the values: only keyed hashes of them, which are not returned). */
export interface ErasureRow {
  id: string;
  fields: string[];
  matched: ErasureCounts;
  repeat_of: string | null;
  created_at: Date;
}

const COLUMNS = 'id, fields, matched, repeat_of, created_at';

/** The account's first erasure sharing any of these keyed hashes, or null. */
export async function findRepeatedErasure(tx: Queryable, accountId: string, hashes: readonly string[]): Promise<string | null> {
  const [row] = await tx.query<{ id: string }>(
    'select id from erasures where account_id = $1 and identity_hashes && $2::text[] order by seq limit 1',
    [accountId, hashes],
  );
  return row?.id ?? null;
}

/** Records an erasure. */
export async function insertErasure(
  tx: Queryable,
  erasure: { id: string; accountId: string; fields: string[]; hashes: string[]; matched: ErasureCounts; repeatOf: string | null; at: Date },
): Promise<ErasureRow> {
  const [row] = await tx.query<ErasureRow>(
    `insert into erasures (id, account_id, fields, identity_hashes, matched, repeat_of, created_at)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
    [erasure.id, erasure.accountId, erasure.fields, erasure.hashes, JSON.stringify(erasure.matched), erasure.repeatOf, erasure.at],
  );
  return row!;
}

/** One page of an account's erasures in creation order. */
export async function listErasuresPage(db: Queryable, accountId: string, request: PageRequest): Promise<PageResult<ErasureRow>> {
  return selectPageBySeq<ErasureRow>(db, { table: 'erasures', columns: COLUMNS, accountId }, request);
}

/** The account's latest `limit` erasures, newest first: one index read on (account_id, seq), whatever the history holds. */
export async function latestErasureRows(db: Queryable, accountId: string, limit: number): Promise<ErasureRow[]> {
  return db.query<ErasureRow>(`select ${COLUMNS} from erasures where account_id = $1 order by seq desc limit $2`, [accountId, limit]);
}
