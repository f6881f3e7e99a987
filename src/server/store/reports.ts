/** SQL for webhook reports (one per site and customer_event_id) and the live flows a report fans out to. */
import type { Queryable } from './db';
import { newId } from '../ids';
import type { SaasSignupResponse } from '../../protocol/webhook';

/** Raw identity of a report, kept for delivery-time normalisation and hashing; never logged. */
export interface ReportIdentity {
  email?: string;
  phone?: string;
  first_name?: string;
  last_name?: string;
}

export interface NewReport {
  siteId: string;
  customerEventId: string;
  triggerKey: string;
  correlationToken: string | null;
  identity: ReportIdentity;
  allowUncorrelated: boolean;
}

/**
 * Inserts a report unless the site already has one with this customer_event_id; returns the new id, or null for a
 * repeat. On PostgreSQL a concurrent duplicate blocks on the unique index until the first transaction ends.
 */
export async function insertReport(tx: Queryable, report: NewReport): Promise<string | null> {
  const [row] = await tx.query<{ id: string }>(
    `insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity, allow_uncorrelated)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (site_id, customer_event_id) do nothing returning id`,
    [
      newId('rpt'),
      report.siteId,
      report.customerEventId,
      report.triggerKey,
      report.correlationToken,
      JSON.stringify(report.identity),
      report.allowUncorrelated,
    ],
  );
  return row?.id ?? null;
}

/** The response the first report of a customer_event_id was answered with (null if it has none). */
export async function findReportResponse(db: Queryable, siteId: string, customerEventId: string): Promise<SaasSignupResponse | null> {
  const [row] = await db.query<{ response: SaasSignupResponse | null }>(
    'select response from reports where site_id = $1 and customer_event_id = $2',
    [siteId, customerEventId],
  );
  return row?.response ?? null;
}

/** Stores the response of a report, so that every repeat is answered the same. */
export async function setReportResponse(tx: Queryable, reportId: string, response: SaasSignupResponse): Promise<void> {
  await tx.query('update reports set response = $2 where id = $1', [reportId, JSON.stringify(response)]);
}

/** A live flow with an API trigger, as the fan-out needs it. */
export interface FanOutFlow {
  id: string;
  name: string;
  actions_config: unknown;
}

/** The live flows of a site whose API trigger has this key, oldest first. Drafts never fire. */
export async function liveFlowsForTrigger(db: Queryable, siteId: string, triggerKey: string): Promise<FanOutFlow[]> {
  return db.query<FanOutFlow>(
    `select id, name, actions_config from flows
     where site_id = $1 and trigger_key = $2 and status = 'live' order by seq`,
    [siteId, triggerKey],
  );
}
