/**
 * The LinkedIn Conversions API destination (`linkedin`): OAuth, connect form, action check, batch send, connection test.
 *
 * Platform facts checked on 2026-11-28:
 * - Verified, LinkedIn's Conversions API page (learn.microsoft.com/linkedin/marketing/integrations/ads-reporting/
 *   conversions-api, the 2023-07 view in the corpus): `X-Restli-Protocol-Version: 2.0.0` and `LinkedIn-Version: {yyyymm}`
 *   "must be passed as a request header in all your API requests"; scopes rw_conversions and r_ads; the member needs
 *   ACCOUNT_BILLING_ADMIN, ACCOUNT_MANAGER, CAMPAIGN_MANAGER or CREATIVE_MANAGER on the ad account.
 * - Verified in LinkedIn's versioned-API request sample as mirrored by developers.qodex.ai (linkedin-marketing-solutions-
 *   versioned-apis/conversions-api/…/10-stream-multiple-conversion-events-to-the-conversion-rule): `X-RestLi-Method:
 *   BATCH_CREATE`, `{elements: [...]}` answered `{elements: [{status: 201}, ...]}`; `conversionHappenedAt` epoch ms;
 *   `conversionValue: {currencyCode, amount}` with the amount a decimal string; userIds SHA256_EMAIL and
 *   LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID; userInfo {firstName, lastName, title, companyName, countryCode}.
 * - Verified only through a partner's page quoting LinkedIn (developer.salesforce.com/docs/data/data-cloud-int/guide/
 *   c360-a-linkedincapi-connector.html): up to 5,000 events a batch; 600 requests a minute and 300,000 a day; events
 *   older than 90 days "automatically rejected"; eventId at most 64 characters (cnv sends a longer id's SHA-256 hex,
 *   request.ts); firstName at most 35 characters (HCL's LinkedIn connector says the same of lastName): cnv leaves out a
 *   userInfo whose name is longer (identity.ts), and the fake refuses one. Searched again on 2026-11-29: LinkedIn's own
 *   schema rows for userInfo (learn.microsoft.com …/conversions-api, …/conversions-api-schema) are not in the corpus
 *   past the page heads, so the 35 stays a partner's figure (lastName's limit only HCL's).
 * - Verified only through a third party quoting LinkedIn (dev.to/aleksuix/linkedins-conversions-api-wants-userids-even-
 *   when-you-match-on-userinfo-4ok7): "LinkedIn documents user.userIds as required on every event"; without hashed ids
 *   send `"userIds": []` with `userInfo` {firstName, lastName}; leaving userIds out is answered 422. So cnv sends a
 *   conversion with names but no email or li_fat_id as `{userIds: [], userInfo}` (identity.ts), and the fake takes an
 *   empty userIds only beside userInfo. Not found in LinkedIn's own page.
 * - NOT verified in a LinkedIn page: what a per-element 409 means (cnv counts it delivered as a duplicate, since
 *   LinkedIn deduplicates on eventId); how far in the future conversionHappenedAt may be (cnv sends at most the sending
 *   time).
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
