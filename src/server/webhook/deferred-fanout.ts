/**
 * Events built after a burst. During a burst of webhook reports (reports queuing behind the batch being written, see
 * ReportWriter), a signup that fires a flow is stored and answered first, waiting for its events
 * (a row of `report_fanouts`, with the time it was received); its events, actions and outbox rows are built here once
 * the burst is over, by the same planning as a report written whole (planReports: the live flows, the snapshot, the
 * pairing), in one statement per batch that marks the reports built and writes their events atomically.
 *
 * Why: writing a report alone costs PGlite's one thread about a third of writing it with its events, and the embedded
 * store's webhook is bound by that thread (docs/benchmarks.md, seventh pass). A 200 still means stored: the report is
 * committed before it is answered, and a report waiting for its events survives a crash and is built at the next
 * start. Delivery holds back during a burst anyway (DeliveryWorkerOptions.holdWhileIntakeBusyMs), so the conversions of
 * a burst reach the ad platforms no later than before; what shows later is the events in the API and the dashboard.
 *
 * A report is built once: the statement takes only reports still waiting, each locked, and skips one another writer
 * holds (a second process on one PostgreSQL), which then builds it.
 *
 * An erasure and a build never overlap: the erasure locks `report_fanouts` against writes and the build's statement
 * deletes from it, so the build commits wholly before the erasure looks for the person's events (and they are
 * erased) or runs after the erasure has committed, when an erased report is off the queue (nothing is built). A report
 * whose planning read a snapshot the erasure deleted (another report's, of the same browser) is not built by that
 * statement: it stays waiting and is planned again (ReportWriteResult.stale).
 */
import type { Database } from '../db/db';
import { reportKey, type ReportKind } from './report-sql';
import { insertAtomically, MAX_PLANS, planReports, type ReportSubmission } from './report';
import type { ValidReport } from './report-input';

/** Reports built per statement: about as many as a batch of the burst, so a report arriving meanwhile waits little. */
export const FANOUT_BATCH = 25;

/** What a pass built: how many reports, and whether it queued deliveries due at once. */
export interface FanOutResult {
  built: number;
  queuedNow: boolean;
}

interface PendingRow {
  id: string;
  site_id: string;
  account_id: string;
  site_key: string;
  trigger_key: string;
  customer_event_id: string;
  correlation_token: string | null;
  identity: ValidReport['identity'];
  allow_uncorrelated: boolean;
  value: string | number | null;
  currency: string | null;
  customer_id: string | null;
  kind: ReportKind;
  occurred_at: Date | null;
  received_at: Date;
}

/**
 * Builds the events of up to `limit` reports waiting for them (or of the reports `reportIds` among them), in the
 * order of their ids: a burst's reports are all built within seconds of its end, so no order among them matters.
 * Returns how many were built; fewer than `limit` means none is left (of those asked for).
 */
export async function fanOutPendingReports(
  db: Database,
  { limit = FANOUT_BATCH, reportIds }: { limit?: number; reportIds?: readonly string[] } = {},
): Promise<FanOutResult> {
  const rows = await pendingReports(db, limit, reportIds);
  if (rows.length === 0) return { built: 0, queuedNow: false };
  let queuedNow = false;
  // One statement for the batch; if it fails, one per report, so that a report that cannot be built (it stays waiting,
  // and is tried again at the next pass) never holds back the others. Returns the ids of the reports left waiting
  // because what their planning read changed meanwhile (ReportWriteResult.stale).
  const build = async (batch: readonly PendingRow[]): Promise<string[]> => {
    const ids = new Map(batch.map((row) => [reportKey(row.site_id, row.customer_event_id), row.id]));
    const planned = await planReports(db, batch.map(submissionOf), ids);
    const { inserted: built, stale } = await insertAtomically(db, planned.map((p) => p.report), { existing: true });
    if (planned.some((p) => p.queuedNow && built.has(reportKey(p.submission.site.id, p.submission.report.customer_event_id)))) queuedNow = true;
    return [...stale].map((key) => ids.get(key)!);
  };
  let stale: string[] = [];
  try {
    stale = await build(rows);
  } catch (error) {
    if (rows.length === 1) throw error;
    let failed: unknown = null;
    for (const row of rows) stale.push(...(await build([row]).catch((e: unknown) => ((failed ??= e), []))));
    if (failed !== null && rows.length < limit) throw failed;
  }
  // Planned again from the stored rows as they are now (an erasure may have taken one off the queue meanwhile). One
  // still stale after that many rounds stays waiting for the next pass.
  for (let round = 1; stale.length > 0 && round < MAX_PLANS; round++) {
    const again = await pendingReports(db, stale.length, stale);
    stale = again.length > 0 ? await build(again) : [];
  }
  // Reports skipped because another writer held them count as built: that writer is building them.
  return { built: rows.length, queuedNow };
}

/** Up to `limit` reports waiting for their events (of `reportIds`, when given), in the order of their ids. */
async function pendingReports(db: Database, limit: number, reportIds?: readonly string[]): Promise<PendingRow[]> {
  return db.query<PendingRow>(
    `select r.id, r.site_id, s.account_id, s.site_key, r.trigger_key, r.customer_event_id, r.correlation_token, r.identity,
       r.allow_uncorrelated, r.value, r.currency, r.customer_id, r.kind, r.occurred_at, f.received_at
     from reports r join report_fanouts f on f.report_id = r.id join sites s on s.id = r.site_id
     -- By an array of ids, so that reports are looked up by their primary key whatever the planner thinks of a young table.
     where r.id = any(array(select q.report_id from report_fanouts q ${reportIds ? 'where q.report_id = any($2::text[])' : ''}
       order by q.report_id limit $1))
     order by r.id`,
    reportIds ? [limit, reportIds] : [limit],
  );
}

/**
 * Builds the events of a site's report (by customer_event_id) if it still waits for them: an adjustment of it applies to
 * its events, so they must exist first. Returns whether deliveries due at once were queued.
 */
export async function fanOutReportOf(db: Database, siteId: string, customerEventId: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    'select r.id from reports r join report_fanouts f on f.report_id = r.id where r.site_id = $1 and r.customer_event_id = $2',
    [siteId, customerEventId],
  );
  if (rows.length === 0) return false;
  return (await fanOutPendingReports(db, { reportIds: rows.map((row) => row.id) })).queuedNow;
}

/** The stored report as the submission it was received as. */
function submissionOf(row: PendingRow): ReportSubmission {
  return {
    site: { id: row.site_id, account_id: row.account_id, site_key: row.site_key },
    triggerKey: row.trigger_key,
    kind: row.kind,
    now: row.received_at,
    occurredAt: row.occurred_at,
    report: {
      customer_event_id: row.customer_event_id,
      correlation_token: row.correlation_token,
      identity: row.identity,
      allow_uncorrelated: row.allow_uncorrelated,
      // numeric comes back as text: the decimal stored is the number received (JSON's shortest form), so it reads back the same.
      value: row.value === null ? null : Number(row.value),
      currency: row.currency,
      customer_id: row.customer_id,
    },
  };
}
