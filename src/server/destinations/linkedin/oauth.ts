/**
 * LinkedIn's 3-legged OAuth 2.0 authorization code flow. The Conversions API needs `rw_conversions` (send events,
 * read rules) and `r_ads` (read the member's ad accounts). Access tokens live 60 days; refresh tokens (365 days) are
 * issued only to apps LinkedIn approved for programmatic refresh tokens, so an unapproved app must reconnect.
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
 * https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow
 * https://learn.microsoft.com/en-us/linkedin/shared/authentication/programmatic-refresh-tokens
 * LinkedIn's authorization request documents no `prompt` (or other) parameter that forces its consent screen: a member
 * with a valid grant for the app is sent straight back. The hosted handoff's browser binding (api/handoffs) is what keeps
 * a consent link opened by someone else from completing a sign-in.
 * A refused client (checked 2026-11-29 with the search tool): LinkedIn's pages found (authorization code flow,
 * programmatic refresh tokens, client credentials flow) do not list the token endpoint's error answers; a refused
 * refresh token is HTTP 400 `invalid_grant` ("Token has been expired or revoked.", as quoted at nango.dev). A refused
 * client is taken to follow RFC 6749 §5.2 (`invalid_client`, 401, as src/demo/fakes/linkedin.ts answers): not
 * verified in a LinkedIn page. Read as the client's refusal (oauth.ts CLIENT_REFUSAL_CODES).
 */
import type { OAuthProvider } from '../destination';

export const LINKEDIN_SCOPES = ['rw_conversions', 'r_ads'] as const;

export const linkedinOAuth: OAuthProvider = {
  authorizeUrl: (settings) => settings.linkedin.oauthAuthorizeUrl,
  tokenUrl: (settings) => settings.linkedin.oauthTokenUrl,
  clientId: (settings) => settings.linkedin.oauthClientId,
  clientSecret: (settings) => settings.linkedin.oauthClientSecret,
  scopes: LINKEDIN_SCOPES,
};
