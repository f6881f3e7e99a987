/**
 * Microsoft Advertising adjustments: ApplyOfflineConversionAdjustments
 * (https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversionadjustments?view=bingads-13),
 * "to adjust the conversion time and value for offline conversions previously applied via the ApplyOfflineConversions
 * operation". Each OfflineConversionAdjustment (…/offlineconversionadjustment?view=bingads-13) names the conversion as
 * it was applied (ConversionName, ConversionTime, MicrosoftClickId or the hashed email/phone) and carries AdjustmentType
 * `Restate` (with AdjustmentValue and AdjustmentCurrencyCode) or `Retract`, and AdjustmentTime (UTC, "cannot be
 * earlier than the original offline conversion date and time"). Verified: those fields and values, and (2026-11-27)
 * the REST path: Microsoft's own REST SDK (BingAds/BingAds-PHP-REST-SDK v13.0.26, CampaignManagementServiceApi.php)
 * posts ApplyOfflineConversionAdjustments to `/CampaignManagement/v13/OfflineConversionAdjustments/Apply`.
 * AdjustmentTime checked again on 2026-11-28 (OfflineConversionAdjustment, bingads-13): "The date and time when the adjustment
 * occurred. The adjustment time cannot be earlier than the original offline conversion date and time", in UTC. Not
 * found in Microsoft's documents: Google's rule that a second restatement needs a more recent time (Google Ads API,
 * RestatementValue), nor which of two restatements with one time wins. The time sent is delivery's
 * adjustmentSendTime all the same (a second after the conversion and after the previous adjustment sent, in the order
 * they arrived; a restatement dated before the one its conversion stands at is never sent), which meets Microsoft's documented rule and leaves no doubt about the order.
 *
 * Verified 2026-11-29 (OfflineConversionAdjustment, ConversionTime, bingads-13; MicrosoftDocs/Advertising-docs
 * offlineconversionadjustment.md): "The date and time when the original offline conversion occurred. The date and time
 * must be within the last 90 days, otherwise the operation will fail". So an adjustment of a conversion that happened
 * more than 90 days before it is sent fails here, with that reason, and is never sent (the strict fake refuses it with
 * OfflineConversionTimeOutOfWindow, as it does a conversion that old). Microsoft's own REST SDK (BingAds Java SDK v13,
 * OfflineConversionAdjustment) also carries HashedEmailAddress and HashedPhoneNumber, which cnv sends to name a
 * conversion applied without a click id.
 */
import { adjustmentOutcomeOf, type AdjustmentInput, type AdjustmentOutcome, type DeliveryOutcome, type RequestSummary } from '../destination';
import { MAX_CONVERSION_AGE_MS, prepareConversion } from './request';

/** Path of ApplyOfflineConversionAdjustments under the Campaign Management host. */
export const APPLY_ADJUSTMENTS_PATH = '/CampaignManagement/v13/OfflineConversionAdjustments/Apply';

/** One element of `OfflineConversionAdjustments`. */
export interface OfflineConversionAdjustment {
  AdjustmentType: 'Restate' | 'Retract';
  AdjustmentTime: string;
  AdjustmentValue?: number;
  AdjustmentCurrencyCode?: string;
  ConversionName: string;
  ConversionTime: string;
  MicrosoftClickId?: string;
  HashedEmailAddress?: string;
  HashedPhoneNumber?: string;
}

export type PreparedAdjustment = { ok: true; adjustment: OfflineConversionAdjustment; summary: RequestSummary } | { ok: false; outcome: AdjustmentOutcome };

/** The adjustment of one conversion, sent at `now`: the conversion named exactly as it was applied, and the change. */
export function prepareAdjustment(input: AdjustmentInput, now: Date): PreparedAdjustment {
  if (now.getTime() - input.original.occurredAt.getTime() > MAX_CONVERSION_AGE_MS) {
    return {
      ok: false,
      outcome: {
        kind: 'failed',
        error: {
          code: 'conversion_too_old',
          message: 'The conversion happened more than 90 days ago; Microsoft Advertising adjusts offline conversions of the last 90 days only.',
          hint: 'Nothing to send: Microsoft keeps the conversion as it was applied. Adjust a conversion within 90 days of it happening.',
        },
      },
    };
  }
  // Rebuilt as of its own time, so it names the conversion exactly as ApplyOfflineConversions received it.
  const original = prepareConversion(input.original, input.original.occurredAt);
  if (!original.ok) {
    const outcome: DeliveryOutcome = original.outcome;
    return { ok: false, outcome: outcome.kind === 'delivered' ? { kind: 'failed', error: { code: 'internal', message: 'unexpected' } } : adjustmentOutcomeOf(outcome) };
  }
  const c = original.conversion;
  const adjustment: OfflineConversionAdjustment = {
    AdjustmentType: input.type === 'restate' ? 'Restate' : 'Retract',
    AdjustmentTime: input.occurredAt.toISOString(),
    ...(input.type === 'restate' && input.value !== null ? { AdjustmentValue: input.value } : {}),
    ...(input.type === 'restate' && input.currency !== null ? { AdjustmentCurrencyCode: input.currency } : {}),
    ConversionName: c.ConversionName,
    ConversionTime: c.ConversionTime,
    ...(c.MicrosoftClickId ? { MicrosoftClickId: c.MicrosoftClickId } : {}),
    ...(c.HashedEmailAddress ? { HashedEmailAddress: c.HashedEmailAddress } : {}),
    ...(c.HashedPhoneNumber ? { HashedPhoneNumber: c.HashedPhoneNumber } : {}),
  };
  const summary: RequestSummary = {
    operation: 'ApplyOfflineConversionAdjustments',
    adjustment_type: adjustment.AdjustmentType,
    adjustment_time: adjustment.AdjustmentTime,
    ...(adjustment.AdjustmentValue !== undefined ? { adjustment_value: adjustment.AdjustmentValue, adjustment_currency: adjustment.AdjustmentCurrencyCode } : {}),
    conversion_name: adjustment.ConversionName,
    conversion_time: adjustment.ConversionTime,
    ...(adjustment.MicrosoftClickId ? { microsoft_click_id: adjustment.MicrosoftClickId } : {}),
    adjustment_id: input.adjustmentId,
  };
  return { ok: true, adjustment, summary };
}

/** The adjustments URL under an API base. */
export function adjustUrl(adsApiBase: string): string {
  return `${adsApiBase}${APPLY_ADJUSTMENTS_PATH}`;
}
