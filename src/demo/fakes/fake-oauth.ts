/**
 * The OAuth 2.0 authorization server a platform's fake adds to its API (RFC 6749 §4.1 with RFC 7636 PKCE): an
 * authorize endpoint that consents at once and redirects back with a code, a token endpoint for the code and refresh
 * grants, and the bearer check of the API. What differs per platform (paths, scopes, how the client authenticates,
 * what makes a refresh token, headers the platform insists on) comes in as options; every deviation from them is a
 * problem on the request, as the platform would refuse it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FakeAnswer, FakeRequest } from './fake-server';

export interface FakeOAuthOptions {
  clientId: string;
  clientSecret: string;
  /** Scopes the authorize request must ask for (space- or comma-separated there). */
  requiredScopes: readonly string[];
  /** How the token endpoint takes the client: in the form, as HTTP Basic, or either. */
  clientAuthentication: 'body' | 'basic' | 'either';
  /** Authorize parameters without which no refresh token is issued (Reddit: `duration=permanent`). */
  refreshTokenOnlyWith?: Readonly<Record<string, string>>;
  /** A problem with a token request's headers the platform would refuse it for (Reddit: a default User-Agent), or null. */
  checkTokenHeaders?: (request: FakeRequest) => string | null;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Prefix of issued tokens (readable in a test's failure output, never a real token's shape). */
  tokenPrefix: string;
  now: () => Date;
}

export interface FakeOAuth {
  readonly clientId: string;
  readonly clientSecret: string;
  /** `GET {authorize}`: consents at once; redirects back with a code, or with an OAuth error. */
  authorize(request: FakeRequest): FakeAnswer;
  /** `POST {token}`: the code and refresh grants; `refuseGrant` answers invalid_grant (a revoked grant). */
  token(request: FakeRequest, refuseGrant?: boolean): FakeAnswer;
  /** The scopes of a valid `Authorization: Bearer` access token this server issued, or null. */
  bearerScopes(authorization: string | undefined): readonly string[] | null;
  issueAccessToken(scopes?: readonly string[]): string;
  issueRefreshToken(scopes?: readonly string[]): string;
  /** Every access token stops working (the API answers 401 until a refresh). */
  revokeAccessTokens(): void;
  /** Every refresh token stops working (the next refresh gets invalid_grant). */
  revokeRefreshTokens(): void;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const oauthError = (status: number, error: string, description: string): FakeAnswer => ({ status, json: { error, error_description: description } });

export function createFakeOAuth(options: FakeOAuthOptions): FakeOAuth {
  const { clientId, clientSecret, now } = options;
  const accessTokens = new Map<string, { expiresAt: number; scopes: readonly string[] }>();
  const refreshTokens = new Map<string, { expiresAt: number; scopes: readonly string[] }>();
  const codes = new Map<string, { redirectUri: string; challenge: string | null; scopes: readonly string[]; refresh: boolean }>();
  const mint = (kind: string) => `${options.tokenPrefix}-${kind}-${randomBytes(18).toString('base64url')}`;

  const issueAccessToken = (scopes: readonly string[] = options.requiredScopes) => {
    const value = mint('at');
    accessTokens.set(value, { expiresAt: now().getTime() + options.accessTokenTtlSeconds * 1000, scopes });
    return value;
  };
  const issueRefreshToken = (scopes: readonly string[] = options.requiredScopes) => {
    const value = mint('rt');
    refreshTokens.set(value, { expiresAt: now().getTime() + options.refreshTokenTtlSeconds * 1000, scopes });
    return value;
  };

  /** The client of a token request, as the options say it must authenticate; null when it may not. */
  const clientOf = (request: FakeRequest, form: Record<string, string>): { id?: string; secret?: string } | null => {
    const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '');
    if (basic && options.clientAuthentication !== 'body') {
      const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part));
      return { id, secret };
    }
    if (!basic && options.clientAuthentication !== 'basic') return { id: form.client_id, secret: form.client_secret };
    request.problems.push(options.clientAuthentication === 'basic' ? 'the client must authenticate with HTTP Basic' : 'the client must authenticate in the form');
    return null;
  };

  return {
    clientId,
    clientSecret,
    authorize(request) {
      const q = request.query;
      let back: URL | null = null;
      try {
        back = new URL(q.get('redirect_uri') ?? '');
      } catch {
        back = null;
      }
      if (q.get('client_id') !== clientId || back === null) {
        request.problems.push('authorize needs the app client_id and an absolute redirect_uri');
        return { status: 400, text: 'invalid client_id or redirect_uri' };
      }
      const redirect = (params: Record<string, string>): FakeAnswer => {
        const url = new URL(back!);
        for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
        const state = q.get('state');
        if (state !== null) url.searchParams.set('state', state);
        return { status: 302, redirect: url.toString() };
      };
      if (q.get('response_type') !== 'code') {
        request.problems.push('response_type must be code');
        return redirect({ error: 'unsupported_response_type' });
      }
      if (q.get('state') === null) request.problems.push('no state');
      const scopes = (q.get('scope') ?? '').split(/[ ,]+/).filter(Boolean);
      const missing = options.requiredScopes.filter((s) => !scopes.includes(s));
      if (missing.length > 0) {
        request.problems.push(`scope must include ${missing.join(', ')}`);
        return redirect({ error: 'invalid_scope' });
      }
      const challenge = q.get('code_challenge');
      if (challenge !== null && q.get('code_challenge_method') !== 'S256') {
        request.problems.push('code_challenge_method must be S256');
        return redirect({ error: 'invalid_request' });
      }
      const refresh = Object.entries(options.refreshTokenOnlyWith ?? {}).every(([key, value]) => q.get(key) === value);
      const code = mint('code');
      codes.set(code, { redirectUri: q.get('redirect_uri')!, challenge, scopes, refresh });
      return redirect({ code });
    },
    token(request, refuseGrant = false) {
      if (request.method !== 'POST' || !(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        request.problems.push('the token request must be a form-encoded POST');
        return oauthError(400, 'invalid_request', 'POST application/x-www-form-urlencoded');
      }
      const headerProblem = options.checkTokenHeaders?.(request) ?? null;
      if (headerProblem) {
        request.problems.push(headerProblem);
        return { status: 429, json: { message: headerProblem, error: 429 } };
      }
      const form: Record<string, string> = isObject(request.body) ? (request.body as Record<string, string>) : {};
      const client = clientOf(request, form);
      if (!client || client.id !== clientId || client.secret !== clientSecret) {
        if (client) request.problems.push('client authentication failed');
        return oauthError(401, 'invalid_client', 'Client authentication failed');
      }
      if (refuseGrant) return oauthError(400, 'invalid_grant', 'The grant was revoked');
      const granted = (scopes: readonly string[], refreshToken: string | null) => {
        const json: Record<string, unknown> = { access_token: issueAccessToken(scopes), token_type: 'bearer', expires_in: options.accessTokenTtlSeconds, scope: scopes.join(' ') };
        if (refreshToken) json.refresh_token = refreshToken;
        return { status: 200, json } as const;
      };
      if (form.grant_type === 'authorization_code') {
        const issued = form.code ? codes.get(form.code) : undefined;
        if (!issued || form.redirect_uri !== issued.redirectUri) {
          request.problems.push('unknown code, or redirect_uri differs from the authorize request');
          return oauthError(400, 'invalid_grant', 'The code is invalid or expired');
        }
        if (issued.challenge !== null && createHash('sha256').update(form.code_verifier ?? '').digest('base64url') !== issued.challenge) {
          request.problems.push('code_verifier does not match code_challenge');
          return oauthError(400, 'invalid_grant', 'PKCE verification failed');
        }
        codes.delete(form.code!);
        return granted(issued.scopes, issued.refresh ? issueRefreshToken(issued.scopes) : null);
      }
      if (form.grant_type === 'refresh_token') {
        const held = form.refresh_token ? refreshTokens.get(form.refresh_token) : undefined;
        if (!held || held.expiresAt <= now().getTime()) return oauthError(400, 'invalid_grant', 'The refresh token is invalid or expired');
        return granted(held.scopes, null);
      }
      request.problems.push('grant_type must be authorization_code or refresh_token');
      return oauthError(400, 'unsupported_grant_type', 'Unsupported grant_type');
    },
    bearerScopes(authorization) {
      const bearer = /^Bearer (.+)$/.exec(authorization ?? '');
      const held = bearer ? accessTokens.get(bearer[1]!) : undefined;
      return held && held.expiresAt > now().getTime() ? held.scopes : null;
    },
    issueAccessToken,
    issueRefreshToken,
    revokeAccessTokens: () => accessTokens.clear(),
    revokeRefreshTokens: () => refreshTokens.clear(),
  };
}
