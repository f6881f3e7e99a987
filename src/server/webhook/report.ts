/**
 * A signed report of a signup: recorded once per (site, customer_event_id), paired with the loader's snapshot by its
 * correlation token, and fanned out as one event per live flow whose API trigger has the report's key.
 */
import type { Database, Queryable } from '../db/db';
import type { SaasSignupResponse } from '../../protocol/webhook';
import { findSnapshots, snapshotKey } from '../pairing';
import { findReportResponses, liveFlowsForTriggers, reportKey, siteTriggerKey } from './report-sql';
import { insertReportsWithEvents, type ReportWithEvents } from './report-batch-sql';
import { describeMatch, pairingDeadline } from '../pairing';
import type { ValidReport } from './report-input';
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
}

/** What became of one submission of a batch; `queuedNow`: it queued deliveries that are due at once. */
export type ReportOutcome = { ok: true; response: SaasSignupResponse; queuedNow: boolean } | { ok: false; error: Error };

/**
 * Records a report and returns its response; a repeated customer_event_id returns the first report's response and
 * writes nothing.
 */
export async function recordReport(
  db: Database,
  site: ReportingSite,
  triggerKey: string,
  report: ValidReport,
  now: Date = new Date(),
): Promise<SaasSignupResponse> {
  const [outcome] = await recordReports(db, [{ site, triggerKey, report, now }]);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.response;
}

/**
 * Records a batch of reports in ONE transaction of three set-based statements whatever its size (live flows, snapshots,
 * then reports with events, actions and outbox rows; one more to read the stored responses of repeats), and returns
 * one outcome per submission, in order. Reports, events, outbox rows and stored responses commit together,
 * so a concurrent duplicate (another batch, another process) waits on the unique index until this one commits and
 * then reads its response. Within the batch, a repeated (site, customer_event_id) is recorded once and every repeat
 * gets the first one's outcome. A database fault fails the whole batch (the caller may retry its reports one by one).
 */
export async function recordReports(db: Database, submissions: readonly ReportSubmission[]): Promise<ReportOutcome[]> {
  if (submissions.length === 0) return [];
  return db.transaction((tx) => recordInTransaction(tx, submissions));
}

async function recordInTransaction(tx: Queryable, submissions: readonly ReportSubmission[]): Promise<ReportOutcome[]> {
  // The first submission of each key stands for its repeats in this batch.
  const firstOf = new Map<string, number>();
  submissions.forEach((s, i) => {
    const key = reportKey(s.site.id, s.report.customer_event_id);
    if (!firstOf.has(key)) firstOf.set(key, i);
  });
  const firsts = [...firstOf.values()].map((i) => submissions[i]!);

  const triggers = firsts.map((s) => ({ siteId: s.site.id, triggerKey: s.triggerKey }));
  const flowsByTrigger = await liveFlowsForTriggers(tx, distinct(triggers, (t) => siteTriggerKey(t.siteId, t.triggerKey)));
  const tokens = firsts.flatMap((s) => (s.report.correlation_token ? [{ siteId: s.site.id, correlationToken: s.report.correlation_token }] : []));
  const snapshots = await findSnapshots(tx, distinct(tokens, (k) => snapshotKey(k.siteId, k.correlationToken)));

  const planned = firsts.map((s) => {
    const token = s.report.correlation_token;
    const flows = flowsByTrigger.get(siteTriggerKey(s.site.id, s.triggerKey)) ?? [];
    const snapshot = token ? (snapshots.get(snapshotKey(s.site.id, token)) ?? null) : null;
    const match = describeMatch(snapshot, token, { now: s.now });
    const response: SaasSignupResponse = {
      status: flows.length > 0 ? 'promoted' : 'no_matching_flow',
      promoted_count: flows.length,
      customer_event_id: s.report.customer_event_id,
      correlated: token !== null,
    };
    return { submission: s, flows, match, response };
  });

  const inserted = await insertReportsWithEvents(
    tx,
    planned.map(({ submission: s, flows, match, response }): ReportWithEvents => ({
      siteId: s.site.id,
      customerEventId: s.report.customer_event_id,
      triggerKey: s.triggerKey,
      correlationToken: s.report.correlation_token,
      identity: s.report.identity,
      allowUncorrelated: s.report.allow_uncorrelated,
      value: s.report.value ?? null,
      currency: s.report.currency ?? null,
      customerId: s.report.customer_id ?? null,
      kind: 'saas_signup',
      occurredAt: null,
      response,
      events: flows.map((flow) => ({
        accountId: s.site.account_id,
        siteId: s.site.id,
        siteKey: s.site.site_key,
        flowId: flow.id,
        flowName: flow.name,
        trigger: 'api',
        occurredAt: match.occurredAt ?? s.now,
        matchQuality: match.matchQuality,
        email: s.report.identity.email ?? null,
        clickIds: match.clickIds,
        data: { customer_event_id: s.report.customer_event_id, trigger_key: s.triggerKey, ...match.data },
        value: s.report.value ?? null,
        currency: s.report.currency ?? null,
        customerId: s.report.customer_id ?? null,
        actions: flowActions(flow.actions_config as ActionConfig[]),
        // Snapshot not here yet: hold delivery until the pairing window closes; the snapshot's arrival makes it due at once.
        deliverAt: match.matchQuality === null ? pairingDeadline(s.now) : s.now,
      })),
    })),
  );

  const keyOf = (s: ReportSubmission) => reportKey(s.site.id, s.report.customer_event_id);
  const repeats = planned.filter((p) => !inserted.has(keyOf(p.submission)));
  const stored = await findReportResponses(tx, repeats.map((p) => ({ siteId: p.submission.site.id, customerEventId: p.submission.report.customer_event_id })));
  const outcomes = new Map<string, ReportOutcome>();
  for (const { submission: s, flows, match, response } of planned) {
    const key = keyOf(s);
    if (inserted.has(key)) {
      // A live flow has at least one action (publish checks it), so any fired flow queued deliveries.
      const queuedNow = match.matchQuality !== null && flows.length > 0;
      outcomes.set(key, { ok: true, response, queuedNow });
      continue;
    }
    const first = stored.get(key);
    outcomes.set(key, first
      ? { ok: true, response: first, queuedNow: false }
      : { ok: false, error: new Error(`report ${s.report.customer_event_id} of site ${s.site.id} has no stored response`) });
  }
  return submissions.map((s) => outcomes.get(keyOf(s))!);
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
