/**
 * An adjustment of a reported conversion (restate its value, or retract it): recorded once per (site, adjustment_id)
 * with one queued result per event action of the report, which delivery sends once the original delivery has settled.
 */
import type { Database } from '../db/db';
import type { AdjustmentResponse } from '../../protocol/webhook';
import { ApiError, printable } from '../http/errors';
import { insertAdjustment } from './adjustment-sql';
import { fanOutReportOf } from './deferred-fanout';
import type { ValidAdjustment } from './conversion-input';

/** Records an adjustment; a repeat answers as the first did. 404 when the site has no report with that customer_event_id. */
export async function recordAdjustment(
  db: Database,
  siteId: string,
  adjustment: ValidAdjustment,
  now: Date,
  onQueued: () => void = () => undefined,
): Promise<AdjustmentResponse> {
  // A report stored during a burst may still wait for its events: they are built first, so the adjustment applies to them.
  if (await fanOutReportOf(db, siteId, adjustment.customer_event_id)) onQueued();
  const recorded = await db.transaction((tx) =>
    insertAdjustment(tx, {
      siteId,
      adjustmentId: adjustment.adjustment_id,
      customerEventId: adjustment.customer_event_id,
      type: adjustment.type,
      value: adjustment.value,
      currency: adjustment.currency,
      occurredAt: adjustment.occurred_at ?? now,
    }),
  );
  if (!recorded.ok) {
    throw new ApiError(
      404, 'not_found_error', 'resource_missing',
      `No conversion was reported with customer_event_id '${printable(adjustment.customer_event_id)}' for this site: adjust a conversion after reporting it.`,
      'customer_event_id',
    );
  }
  if (recorded.inserted && recorded.events > 0) onQueued();
  return { status: 'accepted', adjustment_id: adjustment.adjustment_id, events: recorded.events };
}
