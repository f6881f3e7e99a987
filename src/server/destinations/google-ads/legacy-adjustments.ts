/**
 * Adjustments on the legacy path (connections with `api: google_ads_api`, which upload through uploadClickConversions):
 * the Google Ads API's ConversionAdjustmentUploadService.UploadConversionAdjustments, RESTATEMENT or RETRACTION.
 *
 * Verified, in Google's Google Ads API reference (developers.google.com/google-ads/api/reference/rpc/vNN/…, the same
 * in v16 to v26; the REST mapping in developers.google.com/google-ads/api/rest/reference/rest/v16/customers/uploadConversionAdjustments;
 * RestatementValue's note and the texts of CONVERSION_ALREADY_RETRACTED and ADJUSTMENT_PRECEDES_CONVERSION checked
 * again in v23 to v26 on 2026-11-28; MORE_RECENT_RESTATEMENT_FOUND's text in Google's v3 reference and its client
 * libraries' enum docs, not seen in the current reference pages, so only the fake relies on it):
 * - `POST {base}/{version}/customers/{customerId}:uploadConversionAdjustments`, body `{conversionAdjustments[],
 *   partialFailure, validateOnly?, jobId?}`; `partialFailure` is "Required … This should always be set to true"
 *   (UploadConversionAdjustmentsRequest). Scope `https://www.googleapis.com/auth/adwords`, the one the legacy upload
 *   already uses; the same login-customer-id header as every Google Ads API call (and a developer token only when one
 *   is configured: Google ignores it since 9 September 2026, legacy-request.ts).
 * - ConversionAdjustment: `conversionAction` (resource name; "validation will ignore the customer id and use the
 *   conversion action id"), `adjustmentType` (ConversionAdjustmentType RESTATEMENT, RETRACTION; ENHANCEMENT is for
 *   enhanced conversions, never sent here), `adjustmentDateTime` ("Must be after the conversion_date_time. The timezone
 *   must be specified", "yyyy-mm-dd hh:mm:ss+|-hh:mm"), `orderId` ("If the conversion was reported with an order ID
 *   specified, that order ID must be used as the identifier here": cnv's legacy upload always sets one, so
 *   `gclidDateTimePair`, which "uniquely identifies a conversion that was reported without an order ID", is not sent),
 *   `restatementValue` ("Required for restatements. Should not be supplied for retractions. An error will be returned
 *   if provided for a retraction"; RestatementValue `adjustedValue` is the value after restatement, `currencyCode` the
 *   ISO 4217 code; "If you want to upload a second restatement with a different adjusted value, it must have a new,
 *   more recent, adjustment occurrence time. Otherwise, it will be treated as a duplicate of the previous restatement
 *   and ignored."). Reports alone do not guarantee that: two may carry the same second, or arrive in another order
 *   than their occurred_at. So the time sent is delivery's adjustmentSendTime (delivery/adjustments.ts): at least one
 *   second after the conversion and after the previous adjustment of the same conversion sent, in the order they
 *   arrived (a restatement dated before the one its conversion stands at is superseded and never sent: webhook/adjustment-sql.ts).
 *   The strict fake (src/demo/fake-google-ads.ts) applies that rule: a restatement at the previous one's time is
 *   ignored, an older one is MORE_RECENT_RESTATEMENT_FOUND ("More recent adjustment adjustment_date_time has already
 *   been reported for the associated conversion", ConversionAdjustmentUploadError).
 * - ConversionAdjustmentUploadError: TOO_RECENT_CONVERSION_ACTION ("Try importing again in 6 hours"),
 *   CONVERSION_ALREADY_RETRACTED ("The conversion was already retracted. This adjustment was not processed.":
 *   for a RETRACTION row what was asked for, counted as applied; for a RESTATEMENT row a refusal, `failed` with the
 *   reason, since Google keeps the conversion retracted; legacy-response.ts),
 *   CONVERSION_NOT_FOUND, CONVERSION_EXPIRED ("more than 54 days ago"), ADJUSTMENT_PRECEDES_CONVERSION (permanent),
 *   TOO_RECENT_CONVERSION ("Adjustment can't be recorded because the conversion occurred too recently. Try adjusting a
 *   conversion that occurred at least 24 hours ago"; still listed in the enum's reference, v25). But Google stopped
 *   answering it on 9 September 2024 (Google Ads Developer Blog, "Improvements to conversion adjustment uploads",
 *   2024-08-12, checked 2026-11-29: "Google Ads API users will no longer need to wait 24 hours before uploading
 *   conversion adjustments - they can be uploaded immediately after the original conversion has been uploaded";
 *   "Remove any logic from your application that waits before uploading adjustments"; such adjustments count as
 *   pending in the diagnostics until processed, up to 24 hours). So cnv sends an adjustment as soon as its conversion
 *   was uploaded, a same-day refund included; should Google answer TOO_RECENT_CONVERSION all the same, the adjustment
 *   waits and is sent again (legacy-response.ts), never failed. Which two codes the post removes is in a list the stored
 *   copy of the post does not show; ppc.land's report of it names TOO_RECENT_CONVERSION_ACTION and TOO_RECENT_CONVERSION.
 * Not verified: the field name Google puts in a partial failure's location for this request (`conversion_adjustments`,
 * by analogy with `conversions` of uploadClickConversions; an error without a location counts for every row), and a
 * per-request maximum of adjustments (cnv sends at most the platform's batch size, 2000, per request).
 */
import { adjustmentOutcomeOf, type AdjustmentInput, type AdjustmentOutcome, type RequestSummary, type SendContext } from '../destination';
import type { Settings } from '../../settings';
import { formatConversionDateTime } from './conversion-time';
import { prepareClickConversion, readGoogleAdsAccount, type GoogleAdsAccount } from './legacy-request';
import { postGoogleAdsRows } from './legacy-send';

/** ConversionAdjustment in the REST JSON mapping (lowerCamelCase); only the fields cnv sends. */
export interface LegacyConversionAdjustment {
  conversionAction: string;
  adjustmentType: 'RESTATEMENT' | 'RETRACTION';
  adjustmentDateTime: string;
  orderId: string;
  restatementValue?: { adjustedValue: number; currencyCode: string };
}

export interface UploadConversionAdjustmentsBody {
  conversionAdjustments: LegacyConversionAdjustment[];
  partialFailure: true;
}

/** The repeated field of the request whose index a partial failure's location names. */
export const ADJUSTMENTS_FIELD = 'conversion_adjustments';

/** One adjustment ready to upload, with where it goes and a summary without PII. */
export interface PreparedLegacyAdjustment {
  url: string;
  headers: Record<string, string>;
  requestKey: string;
  adjustment: LegacyConversionAdjustment;
  summary: RequestSummary;
}

/**
 * The adjustment of one conversion the legacy path uploaded: the conversion named exactly as uploadClickConversions
 * received it (its conversion action and order id, rebuilt from the same input), and the change.
 */
export function prepareLegacyAdjustment(
  input: AdjustmentInput,
  account: GoogleAdsAccount,
  settings: Settings,
): { ok: true; prepared: PreparedLegacyAdjustment } | { ok: false; outcome: AdjustmentOutcome } {
  const original = prepareClickConversion(input.original, account, settings);
  if (!original.ok) {
    return { ok: false, outcome: { kind: 'failed', error: { ...original.error, message: `The original conversion cannot be named for Google Ads: ${original.error.message}` } } };
  }
  if (input.type === 'restate' && (input.value === null || input.currency === null)) {
    return { ok: false, outcome: { kind: 'failed', error: { code: 'restatement_without_value', message: 'A restatement needs the new value and its currency.' } } };
  }
  const { conversion, headers } = original.prepared;
  const adjustment: LegacyConversionAdjustment = {
    conversionAction: conversion.conversionAction,
    adjustmentType: input.type === 'restate' ? 'RESTATEMENT' : 'RETRACTION',
    adjustmentDateTime: formatConversionDateTime(input.occurredAt, input.original.siteTimezone),
    orderId: conversion.orderId,
    ...(input.type === 'restate' ? { restatementValue: { adjustedValue: input.value!, currencyCode: input.currency! } } : {}),
  };
  const url = `${settings.googleAdsApiBase}/${settings.googleAdsApiVersion}/customers/${account.customerId}:uploadConversionAdjustments`;
  const summary: RequestSummary = {
    operation: 'UploadConversionAdjustments',
    url,
    customer_id: account.customerId,
    conversion_action: adjustment.conversionAction,
    order_id: adjustment.orderId,
    adjustment_type: adjustment.adjustmentType,
    adjustment_date_time: adjustment.adjustmentDateTime,
    ...(adjustment.restatementValue ? { adjusted_value: adjustment.restatementValue.adjustedValue, currency_code: adjustment.restatementValue.currencyCode } : {}),
    adjustment_id: input.adjustmentId,
  };
  return { ok: true, prepared: { url, headers, requestKey: JSON.stringify([url, headers]), adjustment, summary } };
}

/** The request body: the adjustments, with partial failure on (Google requires it). */
export function adjustmentsBody(adjustments: readonly LegacyConversionAdjustment[]): UploadConversionAdjustmentsBody {
  return { conversionAdjustments: [...adjustments], partialFailure: true };
}

/**
 * Uploads a batch of adjustments of one connection, one request per customer and credentials; one outcome per input,
 * in order. Throws only what `ctx.accessToken()` throws (ReauthorizationRequired); a refused token is `token_refused`.
 */
export async function adjustLegacyBatch(inputs: readonly AdjustmentInput[], ctx: SendContext): Promise<AdjustmentOutcome[]> {
  const account = readGoogleAdsAccount(ctx, await ctx.accessToken());
  if (!account.ok) return inputs.map(() => ({ kind: 'failed', error: account.error }));
  const outcomes: AdjustmentOutcome[] = new Array(inputs.length);
  const requests = new Map<string, Array<{ index: number; prepared: PreparedLegacyAdjustment }>>();
  inputs.forEach((input, index) => {
    const built = prepareLegacyAdjustment(input, account.value, ctx.settings);
    if (!built.ok) outcomes[index] = built.outcome;
    else requests.set(built.prepared.requestKey, [...(requests.get(built.prepared.requestKey) ?? []), { index, prepared: built.prepared }]);
  });
  await Promise.all(
    [...requests.values()].map(async (rows) => {
      const { url, headers } = rows[0]!.prepared;
      const sent = await postGoogleAdsRows(url, headers, adjustmentsBody(rows.map((r) => r.prepared.adjustment)), rows.map((r) => r.prepared.summary), ctx, ADJUSTMENTS_FIELD);
      rows.forEach((row, i) => (outcomes[row.index] = adjustmentOutcomeOf(sent[i]!)));
    }),
  );
  return outcomes;
}
