/**
 * The form trigger: a successful submission of a form tool, seen by the loader, becomes one event per live flow of the
 * site whose form trigger names that integration and whose page filter matches the page, each queued for delivery to
 * the flow's actions. A repeated submission_id creates nothing.
 */
import type { Database } from '../db/db';
import type { FormSubmissionPayload } from '../../protocol/forms';
import { parsePageFilter, pageFilterMatches } from '../../protocol/page-filter';
import { liveFormFlows, type FlowRow } from '../api/flows';
import { insertEvents, type NewEvent } from '../fanout';
import { requestDelivery } from '../delivery';
import type { SiteRow } from '../api/sites';
import { insertFormSubmission } from './form-sql';
import type { SnapshotClient } from './sql';

/** What recording a submission did. */
export interface FormSubmissionResult {
  /** False when the submission_id was recorded before: nothing new was created. */
  created: boolean;
  /** Events created (one per matching live flow). */
  events: number;
}

/** Whether a flow's form trigger fires for a submission: same integration, and its page filter matches the page. */
export function formTriggerMatches(trigger: Record<string, unknown>, payload: Pick<FormSubmissionPayload, 'integration' | 'page_url'>): boolean {
  if (trigger.integrationId !== payload.integration) return false;
  const filter = parsePageFilter(trigger.pageFilter);
  return filter.ok && pageFilterMatches(filter.filter, payload.page_url);
}

function eventOf(site: SiteRow, flow: FlowRow, payload: FormSubmissionPayload, submissionRowId: string): NewEvent {
  const clickIds = payload.touch && Object.keys(payload.touch.click_ids).length > 0 ? (payload.touch.click_ids as Record<string, string>) : null;
  const email = payload.fields.email?.trim().toLowerCase() || null;
  return {
    accountId: site.account_id,
    siteId: site.id,
    siteKey: site.site_key,
    flowId: flow.id,
    flowName: flow.name,
    reportId: null,
    trigger: 'form_submission',
    occurredAt: new Date(payload.occurred_at),
    // As for reports: a click id is high, a touch without one medium, identity only low.
    matchQuality: clickIds ? 'high' : payload.touch ? 'medium' : 'low',
    email,
    clickIds,
    data: {
      form_submission_id: submissionRowId,
      submission_id: payload.submission_id,
      integration: payload.integration,
      form_id: payload.form_id,
      page_url: payload.page_url,
      ...(payload.touch ? { touch: payload.touch } : {}),
      // Kept with the conversion, as for a snapshot's (pairing.ts): the submission goes at the snapshot retention.
      ...(payload.consent ? { consent: payload.consent } : {}),
    },
    actions: (flow.actions_config as Array<{ integrationId?: unknown; config?: { conversion?: { id?: unknown } } }>).map((action) => ({
      destination: String(action.integrationId),
      conversionId: typeof action.config?.conversion?.id === 'string' ? action.config.conversion.id : null,
    })),
  };
}

/** Records a submission and fans it out to the matching live flows, in one transaction. */
export async function recordFormSubmission(
  db: Database,
  site: SiteRow,
  payload: FormSubmissionPayload,
  client: SnapshotClient,
): Promise<FormSubmissionResult> {
  const result = await db.transaction(async (tx) => {
    const id = await insertFormSubmission(tx, site.id, payload, client);
    if (id === null) return { created: false, events: 0 };
    const flows = (await liveFormFlows(tx, site.id)).filter((flow) => formTriggerMatches(flow.trigger_config, payload));
    await insertEvents(tx, flows.map((flow) => eventOf(site, flow, payload, id)));
    return { created: true, events: flows.length };
  });
  if (result.events > 0) requestDelivery();
  return result;
}
