/**
 * A signed report of a signup: recorded once per (site, customer_event_id), paired with the loader's snapshot by its
 * correlation token, and fanned out as one event per live flow whose API trigger has the report's key.
 */
import type { Database, Queryable } from '../db/db';
import type { ConversionMatch, ConversionResponse, SaasSignupResponse } from '../../protocol/webhook';
import { findSnapshots, snapshotKey } from '../pairing';
import {
  customerKey,
  findLatestSignups,
  erasedReportKey,
  findErasedReportResponses,
  findReportResponses,
  reportKey,
  siteTriggerKey,
  type ReportKind,
  type FanOutFlow,
  type PairedSignupEvent,
  type SignupOfCustomer,
  type StoredReport,
} from './report-sql';
import { ApiError } from '../http/errors';
import { insertReportsWithEvents, isEventSlotTaken, type ReportWithEvents, type ReportWriteResult } from './report-batch-sql';
import { liveFlowsOf } from './live-flows';
import { describeMatch, pairingDeadline, type Match, type MatchQuality } from '../pairing';
import type { ValidReport } from './report-input';
import { OCCURRED_AT_FUTURE_SKEW_MS } from './conversion-input';
import type { ActionConfig } from '../api/flows';

/** The site fields a report needs. */
export interface ReportingSite {
  id: string;
  account_id: string;
  site_key: string;
}

/** A verified, validated report to record. */
export interface ReportSubmission {
  site: ReportingSite;
  triggerKey: string;
  report: ValidReport;
  /** When it was received: the pairing window and an unpaired event's occurred_at count from here. */
  now: Date;
  /** `saas_signup` (the default) or `conversion`: a later stage of the customer. */
  kind?: ReportKind;
  /** A later stage's own time, as reported; null or absent: when received. */
  occurredAt?: Date | null;
  /**
   * The keyed hash of its customer_event_id under which an erased report keeps it (ErasedIdHash, see
   * NewReport.erasedIdHash): a retry of an erased report is then a repeat. The webhook's routes always give it.
   */
  erasedIdHash?: string;
}

/** A report's answer: a signup's, or a later stage's (which also says how its click was found). */
export type ReportResponse = SaasSignupResponse | ConversionResponse;

/**
 * What became of one submission of a batch; `queuedNow`: it queued deliveries that are due at once; `deferred`: it is
 * stored waiting for its events (RecordOptions.defer).
 */
export type ReportOutcome = { ok: true; response: ReportResponse; queuedNow: boolean; deferred?: boolean } | { ok: false; error: Error };

/**
 * Records a report and returns its response; a repeated customer_event_id returns the first report's response and
 * writes nothing (so does a retry of an erased report, found by ReportSubmission.erasedIdHash), whatever its body or
 * trigger key (DESIGN.md: "a repeated customer_event_id for the same site returns the first report's response"). A
 * report of the other kind (a later stage with a signup's customer_event_id, or the reverse) is no retry: 409
 * `customer_event_id_reused`, and nothing is written (customerEventIdReused).
 */
export async function recordReport(
  db: Database,
  site: ReportingSite,
  triggerKey: string,
  report: ValidReport,
  now: Date = new Date(),
): Promise<ReportResponse> {
  const [outcome] = await recordReports(db, [{ site, triggerKey, report, now }]);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.response;
}

/** How recordReports writes a batch. */
export interface RecordOptions {
  /**
   * A burst: signups are stored and answered first, their events, actions and outbox rows built right after the burst
   * (deferred-fanout.ts). The answer is the same either way: it depends on the live flows only, never on the snapshot.
   * Later stages are always written whole (their answer says how their click was found, which takes reads).
   */
  defer?: boolean;
}

/**
 * Records a batch of reports and returns one outcome per submission, in order. The reads come first (the live flows,
 * the signups later stages need, the snapshots), then ONE statement writes the reports with their events, actions and
 * outbox rows, atomically by itself: no transaction around it, so on the embedded store nothing holds the database
 * between statements, and a batch is two or three round trips to it instead of four or five (two when the flows are in
 * memory). A repeat's stored response is read after (already committed: a concurrent duplicate, another batch or
 * another process, waits on the unique index until the first commits). In the rare case that an event's slot was
 * taken meanwhile (see insertReportsWithEvents), the write runs again in a transaction that can follow it. A report
 * whose signup or snapshot an erasure removed between its planning and its write is planned again (ReportBasis).
 * Within the batch, a repeated (site, customer_event_id) is recorded once and every repeat gets the first one's
 * outcome. A database fault fails the whole batch (the caller may retry its reports one by one).
 *
 * Deferred (`defer`, a burst of signups): no snapshot is read and no event written; each report that fires a flow is
 * stored as waiting for its events (one statement, the reports alone), which deferred-fanout.ts builds afterwards with
 * exactly the planning below.
 */
export async function recordReports(db: Database, submissions: readonly ReportSubmission[], { defer = false }: RecordOptions = {}): Promise<ReportOutcome[]> {
  if (submissions.length === 0) return [];
  // The first submission of each key stands for its repeats in this batch.
  const firstOf = new Map<string, number>();
  submissions.forEach((s, i) => {
    const key = reportKey(s.site.id, s.report.customer_event_id);
    if (!firstOf.has(key)) firstOf.set(key, i);
  });
  const firsts = [...firstOf.values()].map((i) => submissions[i]!);
  const deferring = defer && firsts.every((s) => kindOf(s) === 'saas_signup');
  const keyOf = (s: ReportSubmission) => reportKey(s.site.id, s.report.customer_event_id);
  let planned = deferring ? await planDeferred(db, firsts) : await planReports(db, firsts);

  // A report whose planning read what an erasure removed meanwhile (the signup a later stage took its email and click
  // from, a snapshot) is left out by the write and planned again, as if it had arrived after the erasure.
  const inserted = new Map<string, string>();
  const failed = new Map<string, Error>();
  for (let toWrite = planned, round = 1; toWrite.length > 0; round++) {
    const written = await insertAtomically(db, toWrite.map((p) => p.report));
    for (const [key, id] of written.inserted) inserted.set(key, id);
    const stale = toWrite.filter((p) => written.stale.has(keyOf(p.submission)));
    if (stale.length > 0 && round >= MAX_PLANS) {
      // (No ids in the message: a caller's customer_event_id may hold an email.)
      for (const p of stale) failed.set(keyOf(p.submission), new Error(`a report's signup or snapshot was erased each of the ${MAX_PLANS} times it was planned`));
      break;
    }
    toWrite = stale.length > 0 ? await planReports(db, stale.map((p) => p.submission)) : [];
    const replanned = new Map(toWrite.map((p) => [keyOf(p.submission), p]));
    planned = planned.map((p) => replanned.get(keyOf(p.submission)) ?? p);
  }

  const repeats = planned.filter((p) => !inserted.has(keyOf(p.submission)) && !failed.has(keyOf(p.submission)));
  const stored = await findReportResponses(db, repeats.map((p) => ({ siteId: p.submission.site.id, customerEventId: p.submission.report.customer_event_id })));
  // A repeat not found by its customer_event_id is a retry of an erased report (its id replaced): one more read, only then.
  const erasedKeyOf = (s: ReportSubmission) => (s.erasedIdHash ? erasedReportKey(s.site.id, s.erasedIdHash) : null);
  const unseen = repeats.filter((p) => !stored.has(keyOf(p.submission)) && p.submission.erasedIdHash);
  const erased = await findErasedReportResponses(db, unseen.map((p) => ({ siteId: p.submission.site.id, erasedIdHash: p.submission.erasedIdHash! })));
  const outcomes = new Map<string, ReportOutcome>();
  /** What the report that holds each key is: this batch's first submission, or the stored report. */
  const holders = new Map<string, ReportTarget>();
  for (const { submission: s, response, queuedNow, deferred } of planned) {
    const key = keyOf(s);
    const error = failed.get(key);
    if (error) {
      outcomes.set(key, { ok: false, error });
      continue;
    }
    if (inserted.has(key)) {
      outcomes.set(key, { ok: true, response, queuedNow, deferred });
      holders.set(key, targetOf(s));
      continue;
    }
    const erasedKey = erasedKeyOf(s);
    const found = stored.get(key);
    const erasedFound = erasedKey === null ? undefined : erased.get(erasedKey);
    const holder = found ?? erasedFound;
    // The erased report's answer, with the caller's own id (the stored one is the erasure's replacement).
    const first = found ? found.response : erasedFound?.response ? { ...erasedFound.response, customer_event_id: s.report.customer_event_id } : undefined;
    if (holder) holders.set(key, { kind: holder.kind, triggerKey: holder.triggerKey });
    outcomes.set(key, first
      ? { ok: true, response: first, queuedNow: false, deferred: false }
      : { ok: false, error: new Error(`report ${s.report.customer_event_id} of site ${s.site.id} has no stored response`) });
  }
  return submissions.map((s) => {
    const holder = holders.get(keyOf(s));
    if (holder && holder.kind !== kindOf(s)) return { ok: false, error: customerEventIdReused(holder) };
    return outcomes.get(keyOf(s))!;
  });
}

/** What a report reports to: its kind (a signup, a later stage) and its trigger key. */
interface ReportTarget {
  kind: ReportKind;
  triggerKey: string;
}

function targetOf(s: ReportSubmission): ReportTarget {
  return { kind: kindOf(s), triggerKey: s.triggerKey };
}

/**
 * The 409 of a report whose customer_event_id the site already holds for a report of the other kind: that cannot be a
 * retry (a retry goes to the same webhook), and answering the first report's response would drop this one silently
 * and break its answer's shape (a stage answered as a signup, without `match`). The message names the earlier
 * report's kind and trigger, never the id itself.
 */
export function customerEventIdReused(earlier: ReportTarget): ApiError {
  const what = earlier.kind === 'conversion' ? `a later stage (the conversion webhook) of trigger '${earlier.triggerKey}'` : `a signup (the saas-signup webhook) of trigger '${earlier.triggerKey}'`;
  return new ApiError(
    409, 'conflict_error', 'customer_event_id_reused',
    `This customer_event_id was already used on this site for ${what}: nothing was recorded. A signup and a later stage ` +
      'are two conversions: give each its own customer_event_id (for a later stage, such as the invoice or payment id).',
    'customer_event_id',
  );
}

/**
 * How many times a report is planned at most when what its planning read is erased each time before its write (each
 * round takes an erasure committing in that moment: in practice a report is planned twice at most).
 */
export const MAX_PLANS = 5;

/** A report planned for writing: the row with its events, its answer, and what writing it queues. */
export interface PlannedReport {
  submission: ReportSubmission;
  report: ReportWithEvents;
  response: ReportResponse;
  /** Deliveries due at once are queued when it is written. */
  queuedNow: boolean;
  /** Stored waiting for its events (deferred-fanout.ts). */
  deferred: boolean;
}

function kindOf(s: ReportSubmission): ReportKind {
  return s.kind ?? 'saas_signup';
}

/** The answer of a report that fires `flows`: a signup's, or a later stage's with how its click was found. */
function responseOf(s: ReportSubmission, flows: readonly unknown[], token: string | null, via: ConversionMatch): ReportResponse {
  const base: SaasSignupResponse = {
    status: flows.length > 0 ? 'promoted' : 'no_matching_flow',
    promoted_count: flows.length,
    customer_event_id: s.report.customer_event_id,
    correlated: token !== null,
  };
  return kindOf(s) === 'conversion' ? { ...base, match: via } : base;
}

/** The report row of a submission (its events given). */
function reportRow(s: ReportSubmission, response: ReportResponse, token: string | null, identity: ValidReport['identity'], events: ReportWithEvents['events']): ReportWithEvents {
  const kind = kindOf(s);
  return {
    siteId: s.site.id,
    customerEventId: s.report.customer_event_id,
    triggerKey: s.triggerKey,
    // A later stage keeps the token it was paired through, so a snapshot that arrives late finds it too.
    correlationToken: token,
    identity,
    allowUncorrelated: s.report.allow_uncorrelated,
    value: s.report.value ?? null,
    currency: s.report.currency ?? null,
    customerId: s.report.customer_id ?? null,
    kind,
    occurredAt: kind === 'conversion' ? (s.occurredAt ?? null) : null,
    response,
    events,
    erasedIdHash: s.erasedIdHash ?? null,
  };
}

/** The live flows each report fires (one read for the batch's distinct triggers, or memory: live-flows.ts). */
async function liveFlowsOfReports(db: Database, firsts: readonly ReportSubmission[]): Promise<(s: ReportSubmission) => readonly FanOutFlow[]> {
  const triggers = firsts.map((s) => ({ siteId: s.site.id, triggerKey: s.triggerKey, kind: kindOf(s) }));
  const byTrigger = await liveFlowsOf(db, distinct(triggers, (t) => siteTriggerKey(t.siteId, t.triggerKey, t.kind)));
  return (s) => byTrigger.get(siteTriggerKey(s.site.id, s.triggerKey, kindOf(s))) ?? [];
}

/** Signups of a burst: the answer from the live flows alone; a report that fires a flow waits for its events. */
async function planDeferred(db: Database, firsts: readonly ReportSubmission[]): Promise<PlannedReport[]> {
  const flowsOf = await liveFlowsOfReports(db, firsts);
  return firsts.map((s) => {
    const flows = flowsOf(s);
    const token = s.report.correlation_token;
    const response = responseOf(s, flows, token, token ? 'click' : 'none');
    const deferred = flows.length > 0;
    const report = { ...reportRow(s, response, token, s.report.identity, []), fanoutPendingSince: deferred ? s.now : null };
    return { submission: s, report, response, queuedNow: false, deferred };
  });
}

/**
 * Plans reports with their events: the live flows, the signups later stages need, the snapshots, then each report's
 * pairing and events. `existing`: reports stored already (deferred-fanout.ts), by key: their ids, and their events
 * count as recorded when the report was received.
 */
export async function planReports(db: Database, firsts: readonly ReportSubmission[], existing?: ReadonlyMap<string, string>): Promise<PlannedReport[]> {
  // The reads that need nothing but the reports go together (side by side on PostgreSQL's pool): the flows (kept in
  // memory on the embedded store, see live-flows.ts), the signups of later stages without a token, the snapshots of
  // the reports' own tokens. A later stage that found its click through its customer's signup needs that signup's
  // snapshot too: one more read, only then.
  const tokenKey = (k: { siteId: string; correlationToken: string }) => snapshotKey(k.siteId, k.correlationToken);
  const ownTokens = distinct(firsts.flatMap((s) => (s.report.correlation_token ? [{ siteId: s.site.id, correlationToken: s.report.correlation_token }] : [])), tokenKey);
  const [flowsOf, signups, snapshots] = await Promise.all([
    liveFlowsOfReports(db, firsts),
    signupsOfStages(db, firsts),
    findSnapshots(db, ownTokens),
  ]);
  const resolved = firsts.map((s) => resolveClick(s, signups));
  const read = new Set(ownTokens.map(tokenKey));
  const viaSignups = distinct(resolved.flatMap((r, i) => (r.token ? [{ siteId: firsts[i]!.site.id, correlationToken: r.token }] : [])), tokenKey)
    .filter((k) => !read.has(tokenKey(k)));
  for (const [key, snapshot] of await findSnapshots(db, viaSignups)) snapshots.set(key, snapshot);

  return firsts.map((s, i) => {
    const { token, identity, via, signup } = resolved[i]!;
    const kind = kindOf(s);
    const flows = flowsOf(s);
    const snapshot = token ? (snapshots.get(snapshotKey(s.site.id, token)) ?? null) : null;
    // A stage found through its customer's signup whose snapshot is gone (retention) takes the click the signup's event kept.
    const match = !snapshot && token && via === 'identity' && signup?.paired ? matchOfSignupEvent(signup.paired, token) : describeMatch(snapshot, token, { now: s.now });
    const response = responseOf(s, flows, token, via);
    // A later stage happened when it says (or when received), not when its signup's snapshot was taken.
    const occurredAt = kind === 'conversion' ? (s.occurredAt ?? s.now) : (match.occurredAt ?? s.now);
    const stageData: Record<string, unknown> = kind === 'conversion'
      ? {
          trigger_type: 'conversion', stage: s.triggerKey, match: via, ...(signup ? { signup_customer_event_id: signup.customer_event_id } : {}),
          // The signup's consent when its snapshot is gone (retention): the snapshot's own, when there, comes with match.data.
          ...(signup?.consent ? { consent: signup.consent } : {}),
        }
      : {};
    const events = flows.map((flow) => ({
      accountId: s.site.account_id,
      siteId: s.site.id,
      siteKey: s.site.site_key,
      flowId: flow.id,
      flowName: flow.name,
      trigger: 'api',
      occurredAt,
      matchQuality: match.matchQuality,
      email: identity.email ?? null,
      clickIds: match.clickIds,
      data: { customer_event_id: s.report.customer_event_id, trigger_key: s.triggerKey, ...stageData, ...match.data },
      value: s.report.value ?? null,
      currency: s.report.currency ?? null,
      customerId: s.report.customer_id ?? null,
      actions: flowActions(flow.actions_config as ActionConfig[]),
      // Snapshot not here yet: hold delivery until the pairing window closes; the snapshot's arrival makes it due at once.
      deliverAt: match.matchQuality === null ? pairingDeadline(s.now) : s.now,
    }));
    const id = existing?.get(reportKey(s.site.id, s.report.customer_event_id));
    // What the write checks is still there: the snapshot the events took their click from, the signup a stage took its
    // identity and token from (ReportBasis).
    const basis = {
      snapshotId: flows.length > 0 ? (snapshot?.id ?? null) : null,
      signup: signup?.id ? { id: signup.id, correlationToken: signup.correlation_token, identity: signup.identity } : null,
    };
    const report: ReportWithEvents = { ...reportRow(s, response, token, identity, events), basis, ...(id ? { id, eventsRecordedAt: s.now } : {}) };
    // A live flow has at least one action (publish checks it), so any fired flow queued deliveries.
    return { submission: s, report, response, queuedNow: match.matchQuality !== null && flows.length > 0, deferred: false };
  });
}

/**
 * The reports' one statement (see recordReports), or, when an event's slot was taken meanwhile, a transaction.
 * `existing`: stored reports whose events are built now (see insertReportsWithEvents). Reports whose basis changed
 * since they were planned are not written: they come back as `stale`.
 */
export async function insertAtomically(db: Database, reports: readonly ReportWithEvents[], { existing = false } = {}): Promise<ReportWriteResult> {
  try {
    return await insertReportsWithEvents(db, reports, { alone: true, existing });
  } catch (error) {
    if (!isEventSlotTaken(error)) throw error;
    return db.transaction((tx) => insertReportsWithEvents(tx, reports, { existing }));
  }
}

/** How a report found its click: its own token, the token of its customer's signup, or none. */
interface ResolvedClick {
  token: string | null;
  /** The identity fields delivered: the report's own, completed by its customer's signup for a later stage. */
  identity: ValidReport['identity'];
  via: ConversionMatch;
  signup: SignupOfCustomer | null;
}

/**
 * The latest signup of the customer of every later stage that came without a token: stored ones, and signups of the
 * same batch that come before it (the group commit may carry both).
 */
async function signupsOfStages(db: Queryable, firsts: readonly ReportSubmission[]): Promise<Map<string, SignupOfCustomer>> {
  const wanted = firsts.flatMap((s) =>
    s.kind === 'conversion' && !s.report.correlation_token && s.report.customer_id ? [{ siteId: s.site.id, customerId: s.report.customer_id, before: signupDeadline(s) }] : [],
  );
  const found = await findLatestSignups(db, distinct(wanted, (k) => customerKey(k.siteId, k.customerId, k.before)));
  // A signup of this batch is the customer's latest, for each stage it does not come after.
  for (const s of firsts) {
    if ((s.kind ?? 'saas_signup') !== 'saas_signup' || !s.report.customer_id) continue;
    for (const k of wanted) {
      if (k.siteId !== s.site.id || k.customerId !== s.report.customer_id || s.now.getTime() > k.before.getTime()) continue;
      found.set(customerKey(k.siteId, k.customerId, k.before), {
        id: null,
        site_id: s.site.id,
        customer_id: s.report.customer_id,
        customer_event_id: s.report.customer_event_id,
        correlation_token: s.report.correlation_token,
        identity: s.report.identity,
        created_at: s.now,
      });
    }
  }
  return found;
}

/**
 * The latest a later stage's signup may have been received: the stage's own time (a signup after the stage cannot hold
 * the click that led to it: Google refuses a conversion dated before its click, CONVERSION_PRECEDES_EVENT), with the
 * clock skew a stage's occurred_at is allowed into the future.
 */
function signupDeadline(s: ReportSubmission): Date {
  return new Date((s.occurredAt ?? s.now).getTime() + OCCURRED_AT_FUTURE_SKEW_MS);
}

/** A signup: its own token. A later stage: its token when given, else its customer's latest signup's, else none. */
function resolveClick(s: ReportSubmission, signups: Map<string, SignupOfCustomer>): ResolvedClick {
  const own = s.report.correlation_token;
  if (s.kind !== 'conversion' || own) return { token: own, identity: s.report.identity, via: own ? 'click' : 'none', signup: null };
  const signup = s.report.customer_id ? (signups.get(customerKey(s.site.id, s.report.customer_id, signupDeadline(s))) ?? null) : null;
  if (!signup) return { token: null, identity: s.report.identity, via: 'none', signup: null };
  const identity: ValidReport['identity'] = {};
  for (const [field, value] of Object.entries({ ...signup.identity, ...s.report.identity })) {
    if (typeof value === 'string' && value.trim() !== '') identity[field as keyof ValidReport['identity']] = value;
  }
  return { token: signup.correlation_token, identity, via: signup.correlation_token ? 'identity' : 'none', signup };
}

/** What a paired event keeps of its snapshot, in `data` (pairing.ts describeMatch), that a later stage takes on. */
const PAIRED_DATA_KEYS = [
  'match_reason', 'page_url', 'utm', 'landing_page_url', 'landing_referrer', 'touch_captured_at', 'snapshot_occurred_at',
  'platform_cookies', 'consent', 'received_click_ids',
] as const;

/**
 * The match of a later stage whose customer's signup was paired but whose snapshot is gone (snapshots are deleted after
 * CNV_SNAPSHOT_RETENTION_DAYS, 30 by default, while a first payment or a renewal comes weeks later): the click ids,
 * match quality and snapshot fields the signup's event keeps. The user agent and IP address were never copied into
 * an event, so they are not sent.
 */
function matchOfSignupEvent(paired: PairedSignupEvent, token: string): Match {
  const data: Record<string, unknown> = { correlation_token: token };
  for (const key of PAIRED_DATA_KEYS) if (paired.data[key] !== undefined && paired.data[key] !== null) data[key] = paired.data[key];
  const clickIds = paired.click_ids && Object.keys(paired.click_ids).length > 0 ? { ...paired.click_ids } : null;
  return { matchQuality: paired.match_quality as MatchQuality, reason: 'paired', clickIds, occurredAt: null, data, snapshot: null };
}

/** The items of a list with distinct keys (the first of each key). */
function distinct<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) if (!byKey.has(keyOf(item))) byKey.set(keyOf(item), item);
  return [...byKey.values()];
}

/** A live flow's actions_config (validated at publish) as event actions: the destination and the conversion to fire. */
export function flowActions(actions: readonly ActionConfig[]): Array<{ destination: string; conversionId: string | null }> {
  return actions.map(({ integrationId, config }) => {
    const conversionId = (config.conversion as { id?: unknown } | undefined)?.id;
    return { destination: integrationId, conversionId: typeof conversionId === 'string' ? conversionId : null };
  });
}
