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
}

/** The key of a report in the unique constraint: (site, customer_event_id), as one string. */
export function reportKey(siteId: string, customerEventId: string): string {
  return compositeKey(siteId, customerEventId);
}

/** The responses the first reports of these (site, customer_event_id) were answered with, by reportKey. */
export async function findReportResponses(
  db: Queryable,
  keys: ReadonlyArray<{ siteId: string; customerEventId: string }>,
): Promise<Map<string, SaasSignupResponse | null>> {
  if (keys.length === 0) return new Map();
  const rows = await db.query<{ site_id: string; customer_event_id: string; response: SaasSignupResponse | null }>(
    `select r.site_id, r.customer_event_id, r.response from reports r
     join unnest($1::text[], $2::text[]) as k(site_id, customer_event_id)
       on r.site_id = k.site_id and r.customer_event_id = k.customer_event_id`,
    [keys.map((k) => k.siteId), keys.map((k) => k.customerEventId)],
  );
  return new Map(rows.map((row) => [reportKey(row.site_id, row.customer_event_id), row.response]));
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

/** The key of a fan-out in liveFlowsForTriggers' answer: (site, trigger key), as one string. */
export function siteTriggerKey(siteId: string, triggerKey: string): string {
  return compositeKey(siteId, triggerKey);
}

/** The live flows of several (site, trigger key) pairs in one read, by siteTriggerKey, each list oldest first. */
export async function liveFlowsForTriggers(
  db: Queryable,
  pairs: ReadonlyArray<{ siteId: string; triggerKey: string }>,
): Promise<Map<string, FanOutFlow[]>> {
  const found = new Map<string, FanOutFlow[]>();
  if (pairs.length === 0) return found;
  const rows = await db.query<FanOutFlow & { site_id: string; trigger_key: string }>(
    `select f.site_id, f.trigger_key, f.id, f.name, f.actions_config from flows f
     join unnest($1::text[], $2::text[]) as k(site_id, trigger_key) on f.site_id = k.site_id and f.trigger_key = k.trigger_key
     where f.status = 'live' order by f.seq`,
    [pairs.map((p) => p.siteId), pairs.map((p) => p.triggerKey)],
  );
  for (const { site_id, trigger_key, ...flow } of rows) {
    const key = siteTriggerKey(site_id, trigger_key);
    const list = found.get(key);
    if (list) list.push(flow);
    else found.set(key, [flow]);
  }
  return found;
}
