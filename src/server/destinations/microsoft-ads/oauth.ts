/**
 * Microsoft's OAuth 2.0 authorization code flow (Microsoft identity platform, `common` tenant so both personal and work
 * accounts can sign in): https://learn.microsoft.com/en-us/advertising/guides/authentication-oauth-consent and
 * https://learn.microsoft.com/en-us/advertising/guides/authentication-oauth-get-tokens. The scope
 * `https://ads.microsoft.com/msads.manage` grants Microsoft Advertising access; "Include offline_access to ensure that a
 * refresh token is included in the response". PKCE (S256) is "recommended for all application types".
 * `prompt=consent` (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow: it "triggers the
 * OAuth consent dialog after the user signs in") so a sign-in always shows Microsoft's consent screen, even to someone
 * who approved cnv before: a consent link sent by someone else never completes unseen.
 */
import type { OAuthProvider } from '../destination';

/** The Microsoft Advertising scopes: manage the user's accounts, and a refresh token to keep doing so. */
export const MICROSOFT_ADS_SCOPES = ['https://ads.microsoft.com/msads.manage', 'offline_access'] as const;

/** Microsoft identity platform authorize/token endpoints and the service's app registration, from `settings.microsoft`. */
export const microsoftOAuth: OAuthProvider = {
  authorizeUrl: (settings) => settings.microsoft.oauthAuthorizeUrl,
  tokenUrl: (settings) => settings.microsoft.oauthTokenUrl,
  clientId: (settings) => settings.microsoft.oauthClientId,
  clientSecret: (settings) => settings.microsoft.oauthClientSecret,
  scopes: MICROSOFT_ADS_SCOPES,
  // The code comes back as a query parameter of the redirect (the documented consent request sets it explicitly), and
  // the consent screen is shown every time.
  extraAuthorizeParams: { response_mode: 'query', prompt: 'consent' },
};
