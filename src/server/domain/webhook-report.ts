/**
 * A signed report of a signup: recorded once per (site, customer_event_id), paired with the loader's snapshot by its
 * correlation token, and fanned out as one event per live flow whose API trigger has the report's key.
 */
import type { Database } from '../store/db';
import type { SaasSignupResponse } from '../../protocol/webhook';
import { insertEvent } from '../store/events';
import { deferDelivery } from '../store/event-pairing';
import { findReportResponse, insertReport, liveFlowsForTrigger, setReportResponse } from '../store/reports';
import { findSnapshot } from '../store/snapshots';
import { describeMatch, pairingDeadline } from './pairing';
import type { ValidReport } from './report-input';

/** The site fields a report needs. */
export interface ReportingSite {
  id: string;
  account_id: string;
  site_key: string;
}

/**
 * Records a report and returns its response; a repeated customer_event_id returns the first report's response and
 * writes nothing. Report, events and response go in one transaction, so a concurrent duplicate waits on the unique
 * index until the first commits and then reads its response.
 */
export async function recordReport(
  db: Database,
  site: ReportingSite,
  triggerKey: string,
  report: ValidReport,
  now: Date = new Date(),
): Promise<SaasSignupResponse> {
  return db.transaction(async (tx) => {
    const token = report.correlation_token;
    const reportId = await insertReport(tx, {
      siteId: site.id,
      customerEventId: report.customer_event_id,
      triggerKey,
      correlationToken: token,
      identity: report.identity,
      allowUncorrelated: report.allow_uncorrelated,
    });
    if (!reportId) {
      const first = await findReportResponse(tx, site.id, report.customer_event_id);
      if (!first) throw new Error(`report ${report.customer_event_id} of site ${site.id} has no stored response`);
      return first;
    }

    const flows = await liveFlowsForTrigger(tx, site.id, triggerKey);
    const snapshot = token ? await findSnapshot(tx, site.id, token) : null;
    const match = describeMatch(snapshot, token, { now });
    for (const flow of flows) {
      const { actionIds } = await insertEvent(tx, {
        accountId: site.account_id,
        siteId: site.id,
        siteKey: site.site_key,
        flowId: flow.id,
        flowName: flow.name,
        reportId,
        trigger: 'api',
        occurredAt: match.occurredAt ?? now,
        matchQuality: match.matchQuality,
        email: report.identity.email ?? null,
        clickIds: match.clickIds,
        data: { customer_event_id: report.customer_event_id, trigger_key: triggerKey, ...match.data },
        actions: flowActions(flow.actions_config),
      });
      // Snapshot not here yet: hold delivery until the pairing window closes; the snapshot's arrival makes it due at once.
      if (match.matchQuality === null) await deferDelivery(tx, actionIds, pairingDeadline(now));
    }

    const response: SaasSignupResponse = {
      status: flows.length > 0 ? 'promoted' : 'no_matching_flow',
      promoted_count: flows.length,
      customer_event_id: report.customer_event_id,
      correlated: token !== null,
    };
    await setReportResponse(tx, reportId, response);
    return response;
  });
}

/** A flow's actions_config as event actions: the destination and the conversion to fire. */
export function flowActions(actionsConfig: unknown): Array<{ destination: string; conversionId: string | null }> {
  if (!Array.isArray(actionsConfig)) return [];
  return actionsConfig.flatMap((action: unknown) => {
    const { integrationId, config } = (action ?? {}) as { integrationId?: unknown; config?: { conversion?: { id?: unknown } } };
    if (typeof integrationId !== 'string' || integrationId === '') return [];
    const conversionId = config?.conversion?.id;
    return [{ destination: integrationId, conversionId: typeof conversionId === 'string' ? conversionId : null }];
  });
}
