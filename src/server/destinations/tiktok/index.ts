/**
 * The `tiktok` destination: TikTok's Events API 2.0 for web events, connected by a pixel code and an Events API access
 * token generated in TikTok Events Manager (no OAuth: the token is long-lived and belongs to the pixel).
 *
 * Platform facts, and where they were checked:
 * - Verified in TikTok's own generated request sample (Events Manager → pixel → Events API → request sample, as
 *   published on an advertiser's page) and in TikTok's own Segment destination (segmentio/action-destinations,
 *   tiktok-conversions/reportWebEvent/utils.ts and formatter.ts, maintained by TikTok):
 *   `POST https://business-api.tiktok.com/open_api/v1.3/event/track/`, header `Access-Token`, JSON body
 *   `{event_source: "web", event_source_id: <pixel code>, test_event_code?, data: [{event, event_time (Unix seconds),
 *   event_id, user: {ttclid, ttp, email, phone, external_id, ip, user_agent}, properties: {value, currency,
 *   content_type}, page: {url, referrer}, limited_data_use}]}`; email, phone and external_id SHA-256 hashed,
 *   ip and user_agent not hashed; ttclid as given ("starts with E.C.P."), ttp the `_ttp` cookie value; email
 *   lower-cased and trimmed before hashing; phone in E.164 (`+` and digits) before hashing.
 * - Verified (Adobe's and Tealium's TikTok connector pages, which quote TikTok's setup): the token is generated in
 *   Events Manager → the pixel → Settings → Events API → Generate Access Token; deduplication keeps the first event
 *   with the same event_source_id, event and event_id received within 48 hours (a browser pixel event with the same
 *   `event_id` is the same conversion).
 * - Verified (TikTok Business API common return codes, as quoted from TikTok's Business Messaging API documentation):
 *   the answer is `{code, message, request_id, data}` with `code: 0` for success and HTTP 200 even for most errors;
 *   40001 no permission, 40002 invalid parameters, 40100 too many requests (the rate limit), 40105 the access token
 *   is missing or invalid.
 * - Verified (TikTok's request sample, as above): `properties.value` is a number (“Value of the order or items
 *   sold. Example: 100”) and `properties.currency` “The 4217 currency code. Example: "USD"”; `user.external_id` is
 *   “Any unique identifier, such as loyalty membership IDs, user IDs … It must be hashed with SHA-256”. TikTok's own
 *   formatter (formatUserId) trims and lower-cases it before hashing, and cnv does the same with `customer_id`.
 * - Verified in TikTok's own Business SDK (com.tiktok.appevents, TTAppEvent: `if (TikTokBusinessSdk.isInSdkLDUMode())
 *   put("limited_data_use", true)`, checked 2026-11-29): Limited Data Use is `limited_data_use: true` on each event.
 *   cnv sends it when the connection chose it (limited-data-use.ts), nothing otherwise. Which US states TikTok applies
 *   it to is not in a TikTok page we could read.
 * - Verified in TikTok's own help pages (search corpus docs/pages, 2026-11-29): "Event deduplication"
 *   (ads.tiktok.com/help/article/event-deduplication): the Pixel and the Events API deduplicate on the pixel, `event`
 *   and `event_id`, identical, within 48 hours of the first; without an event_id from the Events API, TikTok tries the
 *   `_ttp` cookie. "How to Adopt TikTok's Updated Standard Events" (…/how-to-adopt-tiktoks-updated-standard-events, May
 *   2025): SubmitForm renamed Lead and CompletePayment renamed Purchase, "Any new Pixel setup should use Lead or
 *   Purchase", legacy names auto-converted: cnv's defaults are Lead and Purchase (action-config.ts). "About supported
 *   standard events" (Sept 2025) lists Lead and Purchase. NOT verified there: the pixel's own syntax for the id
 *   (`ttq.track(name, {}, {event_id})`, as docs/destinations/tiktok.md shows it, is from third-party guides), and
 *   whether TikTok converts a legacy name before it compares names for deduplication (docs tell a site whose pixel
 *   still fires a legacy name to set the same `event_name`).
 * - NOT verified in a TikTok document (searched 2026-11-29, only third parties answered): what TikTok does with contact
 *   details in `page.url`. cnv sends it without them (`?email=…`, an address in the path, the fragment:
 *   pageUrlForPlatform in ../browser-signals.ts), as it sends every contact detail only hashed.
 * - NOT verified in a TikTok document (TikTok's API reference pages are not in the stored corpus): that no operation
 *   changes or takes back an event already reported (none is in the sample, the Segment destination or TikTok's help
 *   pages; adjustments are `unsupported`, reason in `adjustmentsUnsupportedReason`); the largest `data`
 *   array (cnv sends at most 1,000 events a request, the figure integrations commonly use); whether one invalid event
 *   refuses the whole request (cnv assumes it may, and halves a refused batch to isolate it); the oldest `event_time`
 *   accepted (cnv leaves that check to TikTok); the test mode's behaviour with a code not issued by Events Manager
 *   (the connection test sends a custom event, so it never counts as a real conversion); the exact list of standard
 *   events (cnv accepts TikTok's published names and any other name as a custom event); a documented retry wait for
 *   40100 (none found: cnv honours Retry-After when sent, else backs off).
 *   Searched again 2026-11-29 (search corpora docs and pages: the Events API's batch limit, the age limit of
 *   `event_time`, an update or refund of an event): only third parties answered (Tealium's TikTok Events connector
 *   batches at most 50 requests or 1 MB, docs.tealium.com/server-side-connectors/tiktok-events-connector; an unofficial
 *   route page claims 1,000 events a request), no TikTok page, so these stay unverified.
 */
import type { DestinationPlatform } from '../destination';
import { checkTikTokAction } from './action-config';
import { parseTikTokConnectForm, TIKTOK_CONNECT_FIELDS } from './connect';
import { MAX_EVENTS_PER_REQUEST } from './request';
import { sendTikTokBatch, testTikTokConnection } from './send';

/** TikTok Events API 2.0 (web events) as a destination platform. */
export const tiktokPlatform: DestinationPlatform = {
  type: 'tiktok',
  label: 'TikTok',
  consent:
    'cnv will send your site’s signups and leads to your TikTok pixel through the Events API: the TikTok click id and browser cookie, hashed email, phone and customer id, the conversion’s value, and the visitor’s browser and IP address.',
  oauth: null,
  fields: TIKTOK_CONNECT_FIELDS,
  parseConnectForm: parseTikTokConnectForm,
  checkAction: checkTikTokAction,
  maxBatchSize: MAX_EVENTS_PER_REQUEST,
  sendBatch: sendTikTokBatch,
  testConnection: testTikTokConnection,
  // TikTok's Events API 2.0 reports events (POST /open_api/v1.3/event/track/); its documents and request sample define
  // no update, retraction or refund of an event already reported, and an event sent again with the same event_id within
  // 48 hours is dropped as a duplicate of the first.
  adjustmentsUnsupportedReason:
    "TikTok's Events API only reports new events: it has no operation that changes the value of, or takes back, an event it has received, and a corrected event with the same event_id within 48 hours would be dropped as a duplicate.",
};
