/**
 * Reddit's OAuth 2.0 authorization code flow, the second way to connect Reddit (beside the conversion access token):
 * offered on the hosted page when the service has a Reddit app (`CNV_REDDIT_OAUTH_CLIENT_ID` / `_SECRET`).
 * - Authorize at `https://www.reddit.com/api/v1/authorize` with `response_type=code`, `state`, `redirect_uri`,
 *   `duration=permanent` (else Reddit issues no refresh token and the access token lasts an hour) and `scope`.
 * - Scope `adsconversions`: Reddit's Conversions API answers 403 “Missing adsconversions scope to post conversions to
 *   Pixel” without it.
 * - Token endpoint `https://www.reddit.com/api/v1/access_token`, the app's id and secret as HTTP Basic authentication,
 *   a descriptive User-Agent; refresh with `grant_type=refresh_token`.
 * - A refused client (checked 2026-11-29 with the search tool): Reddit's OAuth2 wiki
 *   (https://github.com/reddit/reddit/wiki/OAuth2) asks for the client as HTTP Basic authentication; RFC 6749 §5.2
 *   requires a 401 when Basic authentication of the client fails, and that is what oauth.ts reads as the client's
 *   refusal (a 401 without `invalid_grant`), with or without an OAuth `error`. The wiki's text on the exact answer
 *   was not found in the index: not verified beyond the RFC.
 * Facts and their sources: ./index.ts.
 */
import { oauthProviderOf } from '../oauth';
import { USER_AGENT } from './request';

export const REDDIT_SCOPES = ['adsconversions'] as const;

export const redditOAuth = oauthProviderOf('reddit', {
  scopes: REDDIT_SCOPES,
  extraAuthorizeParams: { duration: 'permanent' },
  clientAuthentication: 'basic',
  tokenHeaders: { 'user-agent': USER_AGENT },
  optional: true,
});
