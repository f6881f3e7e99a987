/**
 * Google's OAuth 2.0 for the Data Manager API: scope `https://www.googleapis.com/auth/datamanager`
 * (https://developers.google.com/data-manager/api/reference/rest/v1/events/ingest, "Authorization scopes");
 * `access_type=offline` so Google issues a refresh token and `prompt=consent` so it issues one again on a reconnect
 * (https://developers.google.com/identity/protocols/oauth2/web-server). URLs and client come from `settings.google`.
 */
import type { OAuthProvider } from '../destination';

/** The one scope the Data Manager API needs. */
export const DATA_MANAGER_SCOPE = 'https://www.googleapis.com/auth/datamanager';

export const googleOAuth: OAuthProvider = {
  authorizeUrl: (settings) => settings.google.oauthAuthorizeUrl,
  tokenUrl: (settings) => settings.google.oauthTokenUrl,
  clientId: (settings) => settings.google.oauthClientId,
  clientSecret: (settings) => settings.google.oauthClientSecret,
  scopes: [DATA_MANAGER_SCOPE],
  extraAuthorizeParams: { access_type: 'offline', prompt: 'consent' },
};
