/**
 * Adjustments of Google Ads conversions, per the path of the connection.
 *
 * Data Manager API (verified in "Conversion adjustments",
 * https://developers.google.com/data-manager/api/devguides/events/google-ads/conversion-adjustments): an adjustment is
 * an IngestEvents request with the same transactionId, the same destination (conversion action) and the event's
 * required fields and identifiers, carrying the updated values; conversionValue and currency are overwritten. "In the
 * Data Manager API, an adjustment can restate a conversion value or supplement user data": there is no retraction, so
 * a retraction on this path is `unsupported`, said so with the way out.
 * Checked again 2026-11-29 on the same page: "If the transactionId doesn't match an existing conversion, Google Ads
 * creates a new conversion" (Unmatched events), and an adjustment must carry "All fields required for an event,
 * including at least one identifier" (cnv resends the original event, identifiers included). So cnv restates only a
 * conversion whose ingest Google accepted (an original that failed or never went out gets `failed`, delivery/
 * adjustments.ts); one Google accepted but then dropped while processing it (the request's diagnostics show that, per
 * request, not per event) would be recorded anew by the restatement, at the restated value. Not found in the Data
 * Manager pages: how long after a conversion Google still takes its adjustment (the legacy API's CONVERSION_EXPIRED
 * says 54 days; nothing equivalent is documented for the Data Manager API), so cnv sets no limit of its own here.
 *
 * Legacy Google Ads API (uploadClickConversions connections): ConversionAdjustmentUploadService's RESTATEMENT and
 * RETRACTION, by the conversion's order id (./legacy-adjustments.ts, with the facts verified there).
 */
import { adjustmentOutcomeOf, type AdjustmentInput, type AdjustmentOutcome, type DeliveryOutcome, type SendContext } from '../destination';
import { sendDataManagerBatch } from './data-manager-send';
import { adjustLegacyBatch } from './legacy-adjustments';

export const DATA_MANAGER_RETRACT_UNSUPPORTED =
  "Google's Data Manager API defines adjustments that restate a conversion's value or add user data, not retractions. " +
  'To take the conversion back in Google Ads, restate its value to 0 (its count stays) or remove it in Google Ads.';

function asAdjustment(outcome: DeliveryOutcome, input: AdjustmentInput): AdjustmentOutcome {
  return adjustmentOutcomeOf(outcome, (request) => ({ ...request, adjustment: 'restate', adjustment_id: input.adjustmentId }));
}

/** Restatements go out as the original event with its new value; retractions are unsupported on this API. */
export async function adjustGoogleAds(inputs: readonly AdjustmentInput[], ctx: SendContext): Promise<AdjustmentOutcome[]> {
  if (ctx.connection.settings.api === 'google_ads_api') return adjustLegacyBatch(inputs, ctx);
  const outcomes: AdjustmentOutcome[] = new Array(inputs.length);
  const restates: Array<{ at: number; input: AdjustmentInput }> = [];
  inputs.forEach((input, at) => {
    if (input.type === 'retract') outcomes[at] = { kind: 'unsupported', reason: DATA_MANAGER_RETRACT_UNSUPPORTED };
    else restates.push({ at, input });
  });
  if (restates.length > 0) {
    // The same event (same transactionId: one per event action), its value and currency replaced.
    const sent = await sendDataManagerBatch(
      restates.map(({ input }) => ({ ...input.original, value: input.value, currency: input.currency })),
      ctx,
    );
    restates.forEach(({ at, input }, i) => (outcomes[at] = asAdjustment(sent[i]!, input)));
  }
  return outcomes;
}
