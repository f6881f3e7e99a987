/**
 * The `meta` destination: Meta's Conversions API, connected by a dataset ID and a system-user access token (no OAuth).
 *
 * Platform facts, checked on 2026-11-28 against Meta's own pages (found with the search tool):
 * - Verified ("Using the API", developers.facebook.com/docs/marketing-api/conversions-api/using-the-api): events go to
 *   `POST graph.facebook.com/{version}/{pixel_id}/events` with the token; `event_time` in Unix seconds may be up to
 *   7 days before the send, and one event older than that fails the whole request ("we return an error for the entire
 *   request and process no events"); up to 1,000 events in `data` (request.ts: MAX_EVENT_AGE_MS, MAX_EVENTS_PER_REQUEST;
 *   older events fail before sending, so they never sink a batch).
 * - Verified ("ClickID and the fbp and fbc Parameters", …/conversions-api/parameters/fbp-and-fbc): `fbc` is
 *   `fb.<subdomain index>.<creation time, ms>.<fbclid>`, the ClickID "case sensitive - do not apply any modifications";
 *   without a Pixel cookie it may be built from the landing's fbclid (identity.ts).
 * - Verified (Graph API "Handling Errors", developers.facebook.com/docs/graph-api/guides/error-handling): codes 190
 *   and 102 mean the token expired, was revoked or is invalid ("Get a new access token"): token_refused; 1 and 2 are
 *   temporary ("Wait and retry"); 4, 17, 341 and 613 are rate limits (response.ts).
 * - Not verified this time (cited from pages read in earlier sessions, not found again): #2635 for a deprecated version,
 *   100/33 for an unknown dataset, the Business Use Case codes 80000-80014, and `data_processing_options` (Limited Data
 *   Use) values and their country/state codes.
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
