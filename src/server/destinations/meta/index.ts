/**
 * The `meta` destination: Meta's Conversions API, connected by a dataset ID and a system-user access token (no OAuth).
 *
 * Platform facts checked on 2026-11-28 against Meta's own pages (search corpus):
 * - Verified, Server Event Parameters (developers.facebook.com/docs/marketing-api/conversions-api/parameters/server-event):
 *   `event_time` is Unix seconds; "The specified time may be earlier than the time you send the event"; at most 7 days
 *   before sending, else "we return an error for the entire request and process no events"; `event_source_url` must
 *   begin with http:// or https:// and is required for website events; event_name/event_id deduplicate within 48 hours.
 *   Checked again 2026-11-29 with "Handling Duplicate Pixel and Conversions API Events"
 *   (developers.facebook.com/documentation/ads-commerce/conversions-api/deduplicate-pixel-and-server-events): the
 *   Pixel's `eventID` must match the server's `event_id` and its event the `event_name`; the first of two within 48
 *   hours counts, the browser's when both arrive within 5 minutes. cnv's event_id is the customer_event_id or, for a
 *   form trigger, the submission_id the loader announces to the page (service:form-submission).
 *   cnv: event_time is capped at the sending time (request.ts), events over 7 days fail before sending.
 * - Verified, Using the API (developers.facebook.com/documentation/ads-commerce/conversions-api/using-the-api): POST
 *   /{API_VERSION}/{PIXEL_ID}/events; "You can send up to 1,000 events in data"; versions follow the Graph API's schedule.
 * - Verified, fbp and fbc (developers.facebook.com/docs/marketing-api/conversions-api/parameters/fbp-and-fbc): send the
 *   `_fbc`/`_fbp` cookies as they are; the ClickID is case sensitive; fbc is fb.<subdomainIndex>.<creationTime ms>.<fbclid>;
 *   "we recommend refreshing a user's profile with the latest value whenever possible": of a `_fbc` and an fbclid
 *   holding different clicks, cnv sends the newer (identity.ts). Checked again 2026-11-29: creationTime is “the UNIX
 *   time since epoch in milliseconds when the … cookie was saved. If you don't save the … cookie, use the timestamp when
 *   you first observed or received this … value” (read on the page's fbp section; its fbc section was cut off in the
 *   corpus, so that fbc's reads the same is assumed): a built fbc uses when cnv's loader captured the touch
 *   (`touchCapturedAt`, the landing), else the conversion time. The loader itself keeps the newest ad touch
 *   (src/loader/touch-cookie.ts), so the fbclid weighed here is the latest landing's.
 * - Verified, Graph API Handling Errors (developers.facebook.com/docs/graph-api/guides/error-handling): 190 access token
 *   expired (get a new token) and 102 session; 1 and 2 temporary (retry); 4, 17, 341 throttling (retry); 10 and 200-299
 *   permission; 368 "temporarily blocked for policies violations" (wait and retry). cnv: 190/102 make the connection
 *   reauthorization_required; 368 is retried, not split (response.ts).
 * - Verified, Data Processing Options for US Users (developers.facebook.com/docs/marketing-apis/data-processing-options,
 *   and its Meta Pixel and App Events copies, checked 2026-11-29): Limited Data Use is `data_processing_options:
 *   ["LDU"]` with a country (1 the US) and a state (1000 California), 0 and 0 "to request that we geolocate that event";
 *   "If a business enables Limited Data Use but does not set the location parameters … we will determine if the event
 *   is from one of those states". cnv sends ["LDU"], 0, 0 when the connection chose it (limited-data-use.ts), nothing
 *   otherwise; the fake checks those values.
 * - Verified, Customer Information Parameters (developers.facebook.com/docs/marketing-api/conversions-api/parameters/
 *   customer-information-parameters, read 2026-11-29): "Our systems are designed to not accept customer information that
 *   is unhashed Contact Information … such as names, email addresses, and phone numbers". So `event_source_url` goes
 *   without what would carry those in clear (`?email=…`, an address in the path, the fragment: pageUrlForPlatform in
 *   ../browser-signals.ts). NOT verified in a Meta page: how Meta treats such a URL when it gets one (third parties
 *   report Events Manager's "potentially violating personal data" warning and dropped events).
 * - NOT verified in a Meta page found this session: a limit on `event_time` in the future beyond "may be earlier" (the
 *   fake allows 60 s); whether an absent `data_processing_options` is read as LDU off on the server-event page (its
 *   parameter table was not in the corpus); a length limit
 *   of `event_id`; whether a `test_event_code` not issued by Events Manager is accepted; the Business Use Case codes
 *   80000-80014 (taken from the Marketing API rate-limiting page, not re-read).
 */
import type { DestinationPlatform } from '../destination';
import { checkMetaAction } from './action-config';
import { META_CONNECT_FIELDS, parseMetaConnectForm } from './connect';
import { MAX_EVENTS_PER_REQUEST } from './request';
import { sendMetaBatch, testMetaConnection } from './send';

/** Meta Conversions API as a destination platform. */
export const metaPlatform: DestinationPlatform = {
  type: 'meta',
  label: 'Meta',
  consent:
    'cnv will send your site’s signups and leads to your Meta dataset through the Conversions API: hashed email, phone and name, the Meta click and browser ids, and the visitor’s browser and IP address.',
  oauth: null,
  fields: META_CONNECT_FIELDS,
  parseConnectForm: parseMetaConnectForm,
  checkAction: checkMetaAction,
  maxBatchSize: MAX_EVENTS_PER_REQUEST,
  sendBatch: sendMetaBatch,
  testConnection: testMetaConnection,
  // Meta's Conversions API documents sending server events (POST /{pixel_id}/events) and deduplicating them by
  // event_id; none of its pages (Using the API, Parameters, Value Optimization) defines changing the value of, or taking
  // back, an event already received. Searched for an update, refund or delete operation: none found.
  adjustmentsUnsupportedReason:
    "Meta's Conversions API has no operation that changes the value of, or takes back, an event it has received.",
};
