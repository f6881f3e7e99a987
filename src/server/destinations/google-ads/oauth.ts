/**
 * Google's OAuth 2.0 for the Data Manager API: scope `https://www.googleapis.com/auth/datamanager`
 * (https://developers.google.com/data-manager/api/reference/rest/v1/events/ingest, "Authorization scopes"); for the
 * legacy Google Ads API (a connection with `api: google_ads_api`), `https://www.googleapis.com/auth/adwords` as well
 * ("OAuth 2.0 internals for Google Ads API", https://developers.google.com/google-ads/api/docs/oauth/internals, "The
 * Google Ads API scope is: https://www.googleapis.com/auth/adwords"; every method's reference, "Authorization scopes",
 * e.g. https://developers.google.com/google-ads/api/reference/rpc/v21/SharedSetService/MutateSharedSets). Verified
 * 2026-11-28. The choice of API is made before the sign-in (the `api` field is `beforeSignIn`), so a Data Manager
 * connection is never asked for the broader Google Ads scope; a legacy one asks for both, so that moving it to the Data
 * Manager API later needs no new sign-in.
 * Refresh: Google's web-server guide lists client_id, client_secret, grant_type and refresh_token
 * (https://developers.google.com/identity/protocols/OAuth2WebServer, "Refreshing an access token"); RFC 6749 §6 lets
 * a refresh name a scope only within the one granted, so each grant's refresh names the scope it was granted.
 * `access_type=offline` so Google issues a refresh token and `prompt=consent` so it issues one again on a reconnect
 * (https://developers.google.com/identity/protocols/oauth2/web-server). URLs and client come from `settings.google`.
 * A refused client (checked 2026-11-29 with the search tool): Google's own pages found do not list its token
 * endpoint's client errors; answers quoted by users show HTTP 401 `{"error": "deleted_client", "error_description":
 * "The OAuth client was deleted."}` for a deleted client (github.com/kubeguard/guard/issues/346, the gargle R package's
 * refresh code), and Google Cloud's IAM reference says deleting an OAuth client revokes the refresh tokens issued to it
 * (https://docs.cloud.google.com/iam/docs/reference/rest/v1/projects.locations.oauthClients/delete). A wrong secret's
 * `invalid_client` (401) follows RFC 6749 §5.2; not verified in a Google page. Both are read as the client's refusal
 * (oauth.ts CLIENT_REFUSAL_CODES): the operator must act, a reconnect cannot.
 */
import type { DeliveryError, OAuthProvider } from '../destination';

/** The one scope the Data Manager API needs. */
export const DATA_MANAGER_SCOPE = 'https://www.googleapis.com/auth/datamanager';
/** The scope of the Google Ads API (the legacy path: uploadClickConversions, uploadConversionAdjustments). */
export const GOOGLE_ADS_API_SCOPE = 'https://www.googleapis.com/auth/adwords';

/** The scopes a connection sending through `api` needs (the legacy API's grant also covers the Data Manager API). */
export function googleScopesFor(api: string | undefined): readonly string[] {
  return api === 'google_ads_api' ? [DATA_MANAGER_SCOPE, GOOGLE_ADS_API_SCOPE] : [DATA_MANAGER_SCOPE];
}

export const googleOAuth: OAuthProvider = {
  authorizeUrl: (settings) => settings.google.oauthAuthorizeUrl,
  tokenUrl: (settings) => settings.google.oauthTokenUrl,
  clientId: (settings) => settings.google.oauthClientId,
  clientSecret: (settings) => settings.google.oauthClientSecret,
  scopes: [DATA_MANAGER_SCOPE],
  scopesFor: (choices) => googleScopesFor(choices.api),
  extraAuthorizeParams: { access_type: 'offline', prompt: 'consent' },
};

/**
 * The ErrorInfo reason of a request whose access token lacks the API's scope (HTTP 403 PERMISSION_DENIED, domain
 * googleapis.com: google/api/error_reason.proto, ErrorReason 17, the same for every Google API).
 */
export const SCOPE_INSUFFICIENT_REASON = 'ACCESS_TOKEN_SCOPE_INSUFFICIENT';

/**
 * Why a send through `api` was refused for its token's scope: the grant does not cover that API (a connection switched
 * to the Google Ads API after a Data Manager sign-in, or a scope left unticked). Delivery refreshes once, then marks
 * the connection `reauthorization_required` with these words; its conversions wait for a new sign-in.
 */
export function scopeRefused(api: 'data_manager' | 'google_ads_api', status: number): DeliveryError {
  const name = api === 'google_ads_api' ? 'the Google Ads API' : "Google's Data Manager API";
  return {
    // The code of a connection to authorize again: its conversions wait for the new sign-in and go out after it.
    code: 'reauthorization_required',
    message: `Google refused the access token: cnv's authorization does not include ${name} (${googleScopesFor(api).join(' and ')}).`,
    hint: `Connect Google Ads again (Reconnect on the dashboard's Destinations page), choosing ${name} before signing in and allowing every access Google asks for.`,
    status,
  };
}
