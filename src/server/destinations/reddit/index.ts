/**
 * The `reddit` destination: Reddit's Conversions API v3, connected by a pixel ID and either a conversion access token
 * or the OAuth 2.0 authorization code flow (DESIGN's row: authorize and token URLs, client id and secret).
 *
 * Both ways, on one hosted page: Reddit's Conversions API documents (“Conversion Access Token”, “About the Conversions
 * API”) say “We recommend using a conversion access token over a developer access token for Conversions API”: a
 * non-expiring key any administrator generates in Events Manager → Conversions API, revocable there (up to five per
 * business). So the token field is always there. When the operator has registered a Reddit app
 * (`CNV_REDDIT_OAUTH_CLIENT_ID` / `_SECRET`), the page also offers “Sign in with Reddit” (./oauth.ts: scope
 * `adsconversions`, a permanent grant): its access tokens last an hour and are refreshed by delivery's shared token
 * mechanism, a 401 refreshed once and resent, a refused refresh making the connection `reauthorization_required`.
 *
 * Platform facts, and where they were checked:
 * - Verified in Reddit's Ads API v3 documents as captured verbatim by Reddit's own Segment destination
 *   (segmentio/action-destinations, reddit-conversions-api/V3-API-REFERENCE.md: “v2→v3 migration”, “Direct
 *   Integration”, “Event Testing”, error tables), and in Reddit's developer documents (“About the Conversions API”,
 *   “Conversion Access Token”, “Manual Advanced Matching”):
 *   `POST https://ads-api.reddit.com/api/v3/pixels/{pixel_id}/conversion_events`, `Authorization: Bearer <token>`,
 *   body `{data: {test_id?, events: [...]}}`; per event `event_at` (Unix epoch milliseconds), `action_source`
 *   (required: WEBSITE, APP, OTHER, PHYSICAL_STORE), `type: {tracking_type, custom_event_name?}` with tracking types
 *   PAGE_VISIT, VIEW_CONTENT, SEARCH, ADD_TO_CART, ADD_TO_WISHLIST, PURCHASE, LEAD, SIGN_UP, CUSTOM (custom names
 *   free-form, case-sensitive, at most 64 characters), `click_id` (the landing's `rdt_cid`), `event_source_url`,
 *   `user: {email, phone_number, ip_address, user_agent, uuid (the pixel's _rdt_uuid), external_id,
 *   data_processing_options}`, `metadata: {conversion_id, value (a double, in the currency's base unit), currency,
 *   item_count, products}`; PAGE_VISIT, VIEW_CONTENT and SEARCH take no value or currency (Reddit's “About event
 *   metadata”, as cited by the same destination). Events must be sent within 7 days of happening; deduplication with
 *   the Reddit Pixel works on `conversion_id` for events sent within 2 days. Limits: 1,000 events a request,
 *   1,000 requests and 10,000 events a second; Event Testing takes `test_id` (in `data`) and shows single events only.
 *   Answers: 200 `{data: {message: "Successfully processed N conversion events."}}`; 400 “There were N invalid
 *   conversion events. None were processed.” (the whole request) or “Bad Request” (over 1,000 events); 401
 *   `UNAUTHORIZED` (invalid token); 403 not authorized for the pixel or missing `adsconversions` scope; 429 rate
 *   limited (also for default user agents: send a descriptive User-Agent); 500 unavailable, nothing processed.
 * - Verified (Reddit's “Manual Advanced Matching”, “Hashing email addresses”, read in a copy of Reddit's developer
 *   documents at https://papaya-kheer-4b8a70.netlify.app/signals/conversions/reddit-pixel/manual-advanced-matching,
 *   the page of Reddit's own `redditNormalizeEmail`): email canonicalised before SHA-256: lower-cased, everything from
 *   the first `+` to the `@` removed, then “Remove all non-alphanumeric characters from the username”; Reddit's
 *   example `Al.ice$+Apple@Example.Com` and `alice@example.com` both hash to ff8d9819…. The Direct Integration page as
 *   captured by Segment (“lowercase; remove dots in local part; remove anything after `+`”) and Segment's code remove
 *   only dots and the tag; they would hash Reddit's own example (its `$`) differently, so cnv follows Reddit's page.
 *   Extract's Reddit connector (docs.extract.to/reverse-etl-destinations/reddit-audiences) also removes every
 *   non-alphanumeric character. Not found: Reddit's original URL of that page (only the copy above was reachable).
 *   Phone with country code, extension and non-digits removed, `+` first (`+15554441234` → e5b124c5…); hashes are 64
 *   lower-case hex characters.
 * - Verified (the same “Match keys” and “Event metadata” sections): `external_id` is the advertiser-assigned id,
 *   sent unhashed or hashed (Reddit recommends SHA-256; its example `customer12345` hashes to a4cc2fc5…), so cnv
 *   sends the report's `customer_id` trimmed and SHA-256 hashed; `metadata.value` is a double in the currency's base
 *   unit beside `metadata.currency`, and `value`/`item_count` (not product prices) drive optimisation.
 * - Verified (the same reference, endpoint and deduplication sections): the only operation is posting conversion
 *   events; nothing updates, retracts or refunds one, and a resend with the same conversion_id within 2 days is
 *   deduplicated. So adjustments are `unsupported` (reason in `adjustmentsUnsupportedReason`).
 * - Verified (Reddit's OAuth2 wiki, github.com/reddit/reddit/wiki/OAuth2, and python-social-auth's Reddit page, which
 *   quotes it): authorize at https://www.reddit.com/api/v1/authorize with client_id, `response_type=code` (“other
 *   OAuth2 authorization flows are not currently supported”), state, redirect_uri, `duration` (`permanent` for a
 *   refresh token; otherwise the token “will last an hour”) and scope; the token endpoint
 *   https://www.reddit.com/api/v1/access_token. The Conversions API's 403 “Missing adsconversions scope to post
 *   conversions to Pixel” (the v3 reference above) names the scope.
 * - NOT verified in a Reddit document in the corpus (the wiki's token section was cut off there): that the token
 *   endpoint wants the app's id and secret as HTTP Basic authentication (every Reddit client in the code corpus sends
 *   them so, and cnv does) rather than in the form; whether it honours PKCE (cnv sends the challenge; an authorization
 *   server that ignores it still works); whether an error comes with HTTP 200 or 400 (cnv reads `invalid_grant` from
 *   either); which of the Ads API's OAuth scopes beyond `adsconversions` a conversions-only app needs (none, as far
 *   as the 403 says).
 * - NOT verified in a Reddit document (searched 2026-11-29): a deletion path for a person's data. Third-party clients
 *   of the Ads API v3 (an MCP server's tools "create pixel data deletion job", "create data deletion job"; a client's
 *   scope list `adsread,adsedit,adsdatadeletion`) name an `adsdatadeletion` scope and deletion jobs by email, phone or
 *   external id; Reddit's own reference was not in the corpus. docs/personal-data.md says so.
 * - NOT verified in a Reddit document: what Reddit does with contact details in `event_source_url`. cnv sends it
 *   without them (`?email=…`, an address in the path, the fragment: pageUrlForPlatform in ../browser-signals.ts), as
 *   it sends every contact detail only hashed.
 * - NOT verified in a Reddit document: how `external_id` is normalised beyond hashing (cnv keeps its case: customer
 *   ids may be case-sensitive); whether IP addresses are better sent hashed (Reddit accepts unhashed or
 *   SHA-256 signals; cnv hashes the IP as Reddit's own Segment destination does, and sends the user agent as it
 *   is); a documented wait for 429 (cnv honours Retry-After, else backs off); how a duplicate is answered (nothing
 *   in the documents: Reddit deduplicates silently, so a resend is answered 200 and counted delivered).
 */
import type { DestinationPlatform } from '../destination';
import { checkRedditAction } from './action-config';
import { parseRedditConnectForm, REDDIT_CONNECT_FIELDS } from './connect';
import { redditOAuth } from './oauth';
import { MAX_EVENTS_PER_REQUEST } from './request';
import { sendRedditBatch, testRedditConnection } from './send';

/** Reddit's Conversions API v3 as a destination platform. */
export const redditPlatform: DestinationPlatform = {
  type: 'reddit',
  label: 'Reddit',
  consent:
    'cnv will send your site’s signups and leads to your Reddit pixel through the Conversions API: the Reddit click id and browser id, hashed email, phone, IP address and customer id, the conversion’s value, and the visitor’s browser.',
  oauth: redditOAuth,
  fields: REDDIT_CONNECT_FIELDS,
  parseConnectForm: parseRedditConnectForm,
  checkAction: checkRedditAction,
  maxBatchSize: MAX_EVENTS_PER_REQUEST,
  sendBatch: sendRedditBatch,
  testConnection: testRedditConnection,
  // Reddit's Conversions API v3 has one operation, POST …/conversion_events; its documents (v2→v3 migration, Direct
  // Integration, deduplication) define no update, retraction or refund of a conversion event. A corrected event sent
  // again with the same conversion_id within 2 days is dropped as a duplicate, so resending cannot restate it either.
  adjustmentsUnsupportedReason:
    "Reddit's Conversions API only posts new conversion events: it has no operation that changes the value of, or takes back, one it has received, and a corrected event with the same conversion_id would be dropped as a duplicate.",
};
