/**
 * The LinkedIn Conversions API destination (`linkedin`): OAuth, connect form, action check, batch send, connection test.
 *
 * Platform facts, checked on 2026-11-28 (found with the search tool):
 * - Verified in LinkedIn's own reference (learn.microsoft.com/linkedin/marketing/integrations/ads-reporting/conversions-api):
 *   every call carries `X-Restli-Protocol-Version: 2.0.0` and `LinkedIn-Version: {yyyymm}`; the scopes are
 *   `rw_conversions` and `r_ads`, and the user needs an ad account role (ACCOUNT_BILLING_ADMIN, ACCOUNT_MANAGER,
 *   CAMPAIGN_MANAGER or CREATIVE_MANAGER).
 * - Verified in LinkedIn's Postman collection as mirrored (developers.qodex.ai, "Stream multiple conversion events"):
 *   `POST /rest/conversionEvents` with `X-RestLi-Method: BATCH_CREATE`, `elements` of {conversion URN,
 *   conversionHappenedAt in ms, conversionValue, user.userIds (SHA256_EMAIL, LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID),
 *   userInfo, eventId}, answered `{"elements":[{"status":201},…]}`.
 * - Seen only in partners' pages quoting LinkedIn (Salesforce Data Cloud's and RudderStack's connectors), not in
 *   LinkedIn's own words in the corpus: at most 5,000 events in one batch, events older than 90 days rejected.
 * - Not verified: what a 409 for one element means. cnv reads it as an event LinkedIn already holds (its eventId
 *   deduplicates) and counts it delivered (response.ts).
 */
import type { DestinationPlatform } from '../destination';
import { checkLinkedInAction } from './action-config';
import { linkedinFields, parseLinkedInConnectForm } from './connect';
import { linkedinOAuth } from './oauth';
import { MAX_EVENTS_PER_BATCH } from './request';
import { sendLinkedInBatch } from './send';
import { testLinkedInConnection } from './test-connection';

export { linkedinOAuth } from './oauth';

export const linkedinPlatform: DestinationPlatform = {
  type: 'linkedin',
  label: 'LinkedIn',
  consent:
    'cnv will send your conversions to LinkedIn Ads through the Conversions API (hashed email, LinkedIn click id, and first and last name when given) and read your ad accounts and conversion rules.',
  oauth: linkedinOAuth,
  fields: linkedinFields,
  parseConnectForm: parseLinkedInConnectForm,
  checkAction: (config, param) => checkLinkedInAction(config, param),
  maxBatchSize: MAX_EVENTS_PER_BATCH,
  sendBatch: sendLinkedInBatch,
  testConnection: testLinkedInConnection,
  // LinkedIn's Conversions API (POST /rest/conversionEvents, BATCH_CREATE) only creates conversion events; its pages
  // define no update or delete of a conversion event already streamed.
  adjustmentsUnsupportedReason:
    "LinkedIn's Conversions API only creates conversion events: it has no operation that changes the value of, or takes back, one it has received.",
};
