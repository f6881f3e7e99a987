/**
 * Google Ads: the Data Manager API's `events:ingest` (default, no developer token), or the legacy Google Ads API
 * uploadClickConversions when a connection chose it. Connected by Google's OAuth code flow with PKCE, then a form.
 *
 * Deduplication against a Google tag, checked 2026-11-29 (search corpus docs): Google Ads API "Conversion goals"
 * (developers.google.com/google-ads/api/docs/conversions/goals/overview): conversion actions with `primary_for_goal`
 * true "are included in bidding and reporting metrics like 'Conversions'". cnv uploads to an import (UPLOAD_CLICKS)
 * action; a tag counts in its own webpage action, and an order / transaction id dedupes within one action only (the
 * legacy ClickConversion's order_id: "can only be used for one conversion per conversion action"; not found again this
 * session, kept from the legacy request's facts). So the docs (delivery.md, google-ads.md) tell the advertiser to keep
 * only one of the two actions primary. NOT verified: any way for the Data Manager API to dedupe an upload against a
 * tag's conversion (none found).
 */
import type { DestinationPlatform } from '../destination';
import { GOOGLE_ADS_FIELDS, checkGoogleAdsAction, parseGoogleAdsConnectForm } from './connect';
import { MAX_EVENTS_PER_INGEST, conversionActionId } from './data-manager-request';
import { sendDataManagerBatch, testDataManagerConnection } from './data-manager-send';
import { googleOAuth } from './oauth';
import { sendLegacyBatch, testLegacyConnection } from './legacy-send';

import { retrieveRequestStatus } from './diagnostics';
import { adjustGoogleAds } from './adjustments';

export { parseGoogleAdsCustomerId } from './connect';

/** Google advises asking for an upload's diagnostics about 30 minutes after it (developers.google.com/data-manager/api/devguides/diagnostics). */
const DIAGNOSE_AFTER_MS = 30 * 60_000;

export const googleAdsPlatform: DestinationPlatform = {
  type: 'google-ads',
  label: 'Google Ads',
  consent:
    "Conversions captured by your flows will be sent to this Google Ads account (with the ad click id and hashed identifiers) through Google's Data Manager API (or the legacy Google Ads API, if chosen), so Google Ads can attribute signups to your campaigns.",
  oauth: googleOAuth,
  fields: GOOGLE_ADS_FIELDS,
  parseConnectForm: parseGoogleAdsConnectForm,
  checkAction: checkGoogleAdsAction,
  // The transaction id is per cnv event and action (transactionIdFor): two events of one report reach one action as two
  // transactions. Verified 2026-11-29 (Google Ads API ConversionActionCountingType): MANY_PER_CLICK "Count all
  // conversions per click", ONE_PER_CLICK "Count only one conversion per click": a later stage's second payment or renewal
  // of one click counts only with MANY_PER_CLICK (revenue.md says so). Verified the same day (ConversionAction):
  // click_through_lookback_window_days, "The maximum number of days that may elapse between an interaction (for
  // example, a click) and a conversion event"; NOT verified here: its largest allowed value.
  countsEachEventIn: (config) => conversionActionId(config),
  maxBatchSize: MAX_EVENTS_PER_INGEST,
  sendBatch: (inputs, ctx) => (ctx.connection.settings.api === 'google_ads_api' ? sendLegacyBatch(inputs, ctx) : sendDataManagerBatch(inputs, ctx)),
  // Each API is tested through itself: its own scope, account checks and answers.
  testConnection: (ctx) => (ctx.connection.settings.api === 'google_ads_api' ? testLegacyConnection(ctx) : testDataManagerConnection(ctx)),
  diagnoseAfterMs: DIAGNOSE_AFTER_MS,
  adjustBatch: adjustGoogleAds,
  async diagnose(requestId, ctx) {
    const result = await retrieveRequestStatus(requestId, ctx);
    if (!result.ok) return result;
    const { state, message, recordCount, errors } = result.summary;
    return { ok: true, final: state !== 'processing', state, message, details: { record_count: recordCount, errors } };
  },
};
