/**
 * The OAuth 2.0 authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636 with S256) for any platform's
 * `OAuthProvider`: the authorize URL, the code exchange and the refresh. The token endpoint takes a form-encoded POST
 * with the client id and secret in the body (RFC 6749 §2.3.1), which Google, Microsoft and LinkedIn all accept
 * (Google: https://developers.google.com/identity/protocols/oauth2/web-server), or as HTTP Basic authentication where
 * the provider asks for it (Reddit). Tokens never appear in an error.
 *
 * A refusal is told apart three ways (RFC 6749 §5.2): of the grant (`invalid_grant`: the connection must be authorized
 * again), of the service's own client (`client_refused`: the operator's `CNV_<PLATFORM>_OAUTH_CLIENT_ID/SECRET` are
 * wrong, expired, rotated or deleted; no reconnect can fix it), and an outage (5xx, 429, no answer: `transient`). What
 * each platform's token endpoint answers for a refused client is said (with what was verified) in its oauth.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { DeliveryError, OAuthProvider, SendContext } from './destination';
import { oauthSettingName, type Settings } from '../settings';
import { parseJson, requestJson } from './http';

/** The platforms whose settings hold OAuth endpoints and a client (`oauthAuthorizeUrl`, `oauthTokenUrl`, …). */
type OAuthSettingsKey = { [K in keyof Settings]-?: Settings[K] extends { oauthAuthorizeUrl: string; oauthTokenUrl: string; oauthClientId: string; oauthClientSecret: string } ? K : never }[keyof Settings];

/** A provider whose endpoints and client are the settings under `key` (`CNV_<PLATFORM>_OAUTH_*`), with its own scopes and options. */
export function oauthProviderOf(key: OAuthSettingsKey, rest: Omit<OAuthProvider, 'authorizeUrl' | 'tokenUrl' | 'clientId' | 'clientSecret'>): OAuthProvider {
  return {
    authorizeUrl: (settings) => settings[key].oauthAuthorizeUrl,
    tokenUrl: (settings) => settings[key].oauthTokenUrl,
    clientId: (settings) => settings[key].oauthClientId,
    clientSecret: (settings) => settings[key].oauthClientSecret,
    ...rest,
  };
}

/** A PKCE verifier (kept by the service until the callback) and its S256 challenge (sent on the authorize URL). */
export interface PkcePair {
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** Tokens of a successful exchange or refresh. `expiresAt` is computed from the injected clock. */
export interface OAuthTokens {
  accessToken: string;
  expiresAt: Date;
  /** Present when the server issued one (the code exchange; a refresh usually returns none: keep the old one). */
  refreshToken?: string;
  scope?: string;
}

export type TokenResult =
  | { ok: true; tokens: OAuthTokens }
  /** The grant (code or refresh token) was refused: the connection must be authorized again. */
  | { ok: false; kind: 'invalid_grant'; error: DeliveryError }
  /**
   * The token endpoint refused the service's own OAuth client (CLIENT_REFUSAL_CODES, or HTTP 401 without
   * `invalid_grant`): an operator's setting to fix; `oauthError` is the endpoint's code ('' when it gave none).
   */
  | { ok: false; kind: 'client_refused'; error: DeliveryError; oauthError: string }
  /** A network fault, a timeout or a 5xx/429: try again later. */
  | { ok: false; kind: 'transient'; error: DeliveryError }
  /** Any other refusal (a bad request, a redirect URI the client does not have): a configuration problem. */
  | { ok: false; kind: 'rejected'; error: DeliveryError };

/** Clock, cancellation and timeout for token calls. */
export type TokenCallContext = Pick<SendContext, 'signal' | 'timeoutMs' | 'now'>;

/**
 * The token endpoint's error codes that refuse the client itself, not the grant: RFC 6749 §5.2's `invalid_client`
 * (unknown client, failed client authentication) and `unauthorized_client` (the client may not use this grant type),
 * and Google's `deleted_client` (google-ads/oauth.ts). At a refresh, connections.ts reads `unauthorized_client` as the
 * grant's refusal (the client authenticated); at a sign-in's code exchange all three are the client's.
 */
export const CLIENT_REFUSAL_CODES: readonly string[] = ['invalid_client', 'unauthorized_client', 'deleted_client'];

/** The environment variable holding a platform's OAuth client id or secret (`CNV_GOOGLE_OAUTH_CLIENT_ID`, …). */
export function oauthClientSetting(type: string, part: 'ID' | 'SECRET'): string {
  return oauthSettingName(type, part === 'ID' ? 'CLIENT_ID' : 'CLIENT_SECRET');
}

/**
 * Why a platform's token endpoint refused this service's OAuth client, in words for the operator and for whoever reads
 * a waiting conversion or the destination: the settings to check are named, never their values.
 */
export function oauthClientRefusedError(platform: { type: string; label: string }, oauthError: string, status?: number): DeliveryError {
  const said = [oauthError, status === undefined ? '' : `HTTP ${status}`].filter(Boolean).join(', ');
  return {
    code: 'oauth_client_refused',
    message:
      `${platform.label} refused this cnv service's own OAuth client${said ? ` (${said})` : ''}: its client id or secret is wrong, ` +
      `expired, rotated or deleted at ${platform.label}. Connecting ${platform.label} again cannot fix this; the service's operator must.`,
    hint:
      `Operator: set working ${oauthClientSetting(platform.type, 'ID')} and ${oauthClientSetting(platform.type, 'SECRET')} ` +
      `(the client registered with ${platform.label}: its secret may have expired or been rotated, or the client deleted) and restart the service: what waits is sent then. ` +
      `If the client was replaced on purpose, each connection authorized with the old one must be connected again.`,
    ...(status === undefined ? {} : { status }),
  };
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** The S256 challenge of a verifier: base64url(SHA-256(ASCII verifier)) (RFC 7636 §4.2). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** A fresh PKCE pair: 32 random bytes make a 43-character verifier (RFC 7636 §4.1 asks 43 to 128). */
export function pkcePair(random: (size: number) => Uint8Array = randomBytes): PkcePair {
  const verifier = base64url(random(32));
  return { verifier, challenge: pkceChallenge(verifier), method: 'S256' };
}

/** The scopes a sign-in asks for, given the choices made before it (OAuthProvider.scopesFor). */
export function scopesToAsk(provider: OAuthProvider, choices: Readonly<Record<string, string>> = {}): readonly string[] {
  return provider.scopesFor?.(choices) ?? provider.scopes;
}

/**
 * The URL to send the user to: code flow, the scopes (the provider's, or `scopes` as chosen before the sign-in), the
 * provider's extra parameters, state and PKCE challenge.
 */
export function authorizeUrl(
  provider: OAuthProvider,
  settings: Settings,
  params: { state: string; redirectUri: string; codeChallenge: string; scopes?: readonly string[] },
): string {
  const url = new URL(provider.authorizeUrl(settings));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.clientId(settings));
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('scope', (params.scopes ?? provider.scopes).join(' '));
  url.searchParams.set('state', params.state);
  url.searchParams.set('code_challenge', params.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  for (const [key, value] of Object.entries(provider.extraAuthorizeParams ?? {})) url.searchParams.set(key, value);
  return url.toString();
}

/**
 * The client's credentials as the provider's token endpoint takes them: in the form (RFC 6749 §2.3.1), or as HTTP
 * Basic authentication (RFC 6749 §2.3.1, each part form-urlencoded first) with only `client_id` left out of the body.
 */
function withClient(provider: OAuthProvider, settings: Settings, form: Record<string, string>): { form: Record<string, string>; headers: Record<string, string> } {
  const id = provider.clientId(settings);
  const secret = provider.clientSecret(settings);
  if (provider.clientAuthentication !== 'basic') return { form: { ...form, client_id: id, client_secret: secret }, headers: {} };
  const basic = Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
  return { form, headers: { authorization: `Basic ${basic}` } };
}

async function postToken(provider: OAuthProvider, settings: Settings, fields: Record<string, string>, ctx: TokenCallContext): Promise<TokenResult> {
  const { form, headers } = withClient(provider, settings, fields);
  const answer = await requestJson('the token endpoint', provider.tokenUrl(settings), { headers: { accept: 'application/json', ...provider.tokenHeaders, ...headers }, form }, ctx);
  if (!answer.answered) return { ok: false, kind: 'transient', error: answer.error };
  const { status, text } = answer;
  const body = parseJson(text) as Record<string, unknown> | null;
  if (status >= 200 && status < 300 && body && typeof body.access_token === 'string') {
    const lifetime = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in ?? 3600);
    return {
      ok: true,
      tokens: {
        accessToken: body.access_token,
        expiresAt: new Date(ctx.now().getTime() + (Number.isFinite(lifetime) ? lifetime : 3600) * 1000),
        ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
        ...(typeof body.scope === 'string' ? { scope: body.scope } : {}),
      },
    };
  }
  const oauthError = body && typeof body.error === 'string' ? body.error : '';
  if (status >= 500 || status === 429) {
    return { ok: false, kind: 'transient', error: { code: 'token_endpoint_unavailable', message: `The token endpoint answered HTTP ${status}.`, status } };
  }
  if (oauthError === 'invalid_grant') {
    return {
      ok: false,
      kind: 'invalid_grant',
      error: {
        code: 'reauthorization_required',
        message: 'The platform refused the authorization (invalid_grant): it was revoked, expired or already used.',
        hint: 'Open a new connect_destination handoff and authorize the account again.',
        status,
      },
    };
  }
  // RFC 6749 §5.2: `invalid_client` "MAY" come with HTTP 401, and MUST when the client authenticated with HTTP Basic
  // (Reddit); a 401 without `invalid_grant` is the client's refusal too.
  if (CLIENT_REFUSAL_CODES.includes(oauthError) || status === 401) {
    const error: DeliveryError = {
      code: 'oauth_client_refused',
      message: `The token endpoint refused the service's OAuth client (HTTP ${status}${oauthError ? `, ${oauthError}` : ''}).`,
      hint: 'Check the OAuth client id and client secret settings.',
      status,
    };
    return { ok: false, kind: 'client_refused', error, oauthError };
  }
  return {
    ok: false,
    kind: 'rejected',
    error: {
      code: 'token_request_rejected',
      message: `The token endpoint refused the request (HTTP ${status}${oauthError ? `, ${oauthError}` : ''}).`,
      hint: 'Check the OAuth client id, client secret and redirect URI settings.',
      status,
    },
  };
}

/** Exchanges an authorization code (with its PKCE verifier) for tokens. */
export function exchangeCode(
  provider: OAuthProvider,
  settings: Settings,
  params: { code: string; redirectUri: string; codeVerifier: string },
  ctx: TokenCallContext,
): Promise<TokenResult> {
  return postToken(
    provider,
    settings,
    { grant_type: 'authorization_code', code: params.code, redirect_uri: params.redirectUri, code_verifier: params.codeVerifier },
    ctx,
  );
}

/**
 * Gets a new access token with a refresh token; `invalid_grant` means the user must authorize again. `grantedScope` is
 * the scope the grant was given (stored with it since scopes depend on choices made before the sign-in); a refresh may
 * not ask for more (RFC 6749 §6), so without it the provider's default scopes are asked, as every grant before had.
 */
export function refreshAccessToken(
  provider: OAuthProvider,
  settings: Settings,
  refreshToken: string,
  ctx: TokenCallContext,
  grantedScope?: string,
): Promise<TokenResult> {
  return postToken(
    provider,
    settings,
    // Microsoft's token endpoint requires the scope on a refresh too; Google and LinkedIn accept it.
    { grant_type: 'refresh_token', refresh_token: refreshToken, scope: grantedScope || provider.scopes.join(' ') },
    ctx,
  );
}
