/**
 * Microsoft's OAuth 2.0 authorization code flow (Microsoft identity platform, `common` tenant so both personal and work
 * accounts can sign in): https://learn.microsoft.com/en-us/advertising/guides/authentication-oauth-consent and
 * https://learn.microsoft.com/en-us/advertising/guides/authentication-oauth-get-tokens. The scope
 * `https://ads.microsoft.com/msads.manage` grants Microsoft Advertising access; "Include offline_access to ensure that a
 * refresh token is included in the response". PKCE (S256) is "recommended for all application types".
 * `prompt=select_account` (https://learn.microsoft.com/entra/identity-platform/msal-js-prompt-behavior: it "interrupts
 * single sign-on by providing an account selection experience") so a sign-in always asks which Microsoft account to
 * use, even of someone who approved cnv before: a consent link sent by someone else never completes unseen, and a person
 * with a work and a personal account picks the one that holds the ad account. Not `prompt=consent`, which forces the
 * user's own consent screen every time: where a tenant lets only its admins consent, that would stop users whose admin
 * already approved cnv (Microsoft's pages found do not say otherwise). The browser binding of the callback
 * (api/handoffs/browser-binding.ts) is what refuses a sign-in completed in another browser.
 * A refused client (checked 2026-11-29 with the search tool): the Microsoft identity platform's token endpoint answers
 * RFC 6749's codes with an `AADSTS` number in `error_description` and `error_codes`
 * (https://learn.microsoft.com/en-us/previous-versions/azure/dn645548(v=azure.100), "Token Issuance Endpoint Errors").
 * An expired client secret is AADSTS7000222 and a wrong one AADSTS7000215, both `invalid_client` (Entra's own error
 * text as quoted at aztokenwatch.com and learn.microsoft.com/answers; the current learn.microsoft.com error-code
 * reference was not found in the index); an application id the directory does not know is AADSTS700016,
 * `unauthorized_client` (as src/demo/fakes/microsoft-ads.ts answers; not found in a Microsoft page). Client secrets
 * of an app registration have an end date (24 months at most from the Entra admin center: third-party accounts only,
 * Datadog's integration and unified.to; no Microsoft page found), so an operator meets this sooner or later: read as the
 * client's refusal (oauth.ts CLIENT_REFUSAL_CODES), never as the grant's.
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
  // Microsoft asks which account every time.
  extraAuthorizeParams: { response_mode: 'query', prompt: 'select_account' },
};
