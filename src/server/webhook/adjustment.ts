/**
 * An adjustment of a reported conversion (restate its value, or retract it): recorded once per (site, adjustment_id)
 * with one queued result per event action of the report, which delivery sends once the original delivery has settled.
 */
import type { Database } from '../db/db';
import type { AdjustmentResponse } from '../../protocol/webhook';
import { ApiError, printable } from '../http/errors';
import { insertAdjustment, type AdjustmentField } from './adjustment-sql';
import type { ErasedIdHash } from '../api/erasures';
import { fanOutReportOf } from './deferred-fanout';
import type { ValidAdjustment } from './conversion-input';

/** How each field that may differ is named in the 409 of a reused adjustment_id. */
const DIFFERS: Record<AdjustmentField, string> = {
  customer_event_id: 'another conversion (customer_event_id)',
  type: 'another type',
  value: 'another value',
  currency: 'another currency',
};

/**
 * Records an adjustment; a repeat (the same adjustment_id and body) answers as the first did. 404 when the site has no
 * report with that customer_event_id; 409 `conversion_erased` when its person was erased; 409 `conversion_retracted`
 * when a restatement names a conversion already retracted; 409 `adjustment_id_reused`
 * when the adjustment_id was used for another adjustment. Those write nothing. A restatement dated before the one its
 * conversion stands at is accepted, recorded superseded and never sent (adjustment-sql.ts: so the latest-dated
 * restatement is the one a conversion stands at, whatever the order its events arrived in). `idHash`: the keyed hash erased rows
 * keep of their caller ids (the webhook's route gives it), so a retry of an erased adjustment is still a repeat.
 */
export async function recordAdjustment(
  db: Database,
  siteId: string,
  adjustment: ValidAdjustment,
  now: Date,
  onQueued: () => void = () => undefined,
  idHash?: ErasedIdHash,
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
      ...(idHash
        ? { erasedIdHashes: { customerEventId: idHash(siteId, 'customer_event_id', adjustment.customer_event_id), adjustmentId: idHash(siteId, 'adjustment_id', adjustment.adjustment_id) } }
        : {}),
    }),
  );
  if (!recorded.ok) {
    if (recorded.reason === 'reused') {
      throw new ApiError(
        409, 'conflict_error', 'adjustment_id_reused',
        `adjustment_id '${printable(adjustment.adjustment_id)}' was already used for an adjustment with ${recorded.differs.map((field) => DIFFERS[field]).join(', ')}: ` +
          'nothing was recorded. A repeat must be the same adjustment; give a new adjustment a new adjustment_id.',
        'adjustment_id',
      );
    }
    if (recorded.reason === 'erased_report') {
      throw new ApiError(
        409, 'conflict_error', 'conversion_erased',
        `The conversion with customer_event_id '${printable(adjustment.customer_event_id)}' belongs to a person whose data was erased ` +
          '(an erasure request): cnv adjusts it no more and recorded nothing. Adjust it on the ad platforms directly if needed.',
        'customer_event_id',
      );
    }
    if (recorded.reason === 'retracted_report') {
      throw new ApiError(
        409, 'conflict_error', 'conversion_retracted',
        `The conversion with customer_event_id '${printable(adjustment.customer_event_id)}' was retracted by an earlier adjustment, ` +
          'and a retraction is final (on the ad platforms too): nothing was recorded. If the customer paid ' +
          'again, report that payment as a new conversion (a later stage with its own customer_event_id).',
        'customer_event_id',
      );
    }
    throw new ApiError(
      404, 'not_found_error', 'resource_missing',
      `No conversion was reported with customer_event_id '${printable(adjustment.customer_event_id)}' for this site: adjust a conversion after reporting it.`,
      'customer_event_id',
    );
  }
  if (recorded.inserted && recorded.events > 0) onQueued();
  return { status: 'accepted', adjustment_id: adjustment.adjustment_id, events: recorded.events };
}
