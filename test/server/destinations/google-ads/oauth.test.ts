import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGoogle, type FakeGoogle } from '../../../../src/demo/fakes/google';
import { googleOAuth } from '../../../../src/server/destinations/google-ads/oauth';
import { authorizeUrl, exchangeCode, pkceChallenge, pkcePair, refreshAccessToken } from '../../../../src/server/destinations/oauth';
import { loadSettings, type Settings } from '../../../../src/server/settings';

let google: FakeGoogle;
let settings: Settings;
const NOW = new Date('2026-11-21T10:00:00Z');
const call = { signal: new AbortController().signal, timeoutMs: 10_000, now: () => NOW };
const redirectUri = 'http://127.0.0.1:8787/handoffs/callback';

beforeAll(async () => {
  google = await startFakeGoogle({ now: NOW });
  settings = loadSettings({
    CNV_GOOGLE_OAUTH_AUTHORIZE_URL: google.urls.authorize,
    CNV_GOOGLE_OAUTH_TOKEN_URL: google.urls.token,
    CNV_GOOGLE_OAUTH_CLIENT_ID: google.client.id,
    CNV_GOOGLE_OAUTH_CLIENT_SECRET: google.client.secret,
  });
});
afterAll(() => google.close());

async function authorize(challenge: string): Promise<URL> {
  const response = await fetch(authorizeUrl(googleOAuth, settings, { state: 'st-1', redirectUri, codeChallenge: challenge }), { redirect: 'manual' });
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location')!);
}

describe('PKCE', () => {
  it('matches the RFC 7636 appendix B example', () => {
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes a 43-character verifier from 32 random bytes', () => {
    const pair = pkcePair(() => new Uint8Array(32).fill(7));
    expect(pair.verifier).toHaveLength(43);
    expect(pair.challenge).toBe(pkceChallenge(pair.verifier));
    expect(pair.method).toBe('S256');
  });
});

describe('the Google OAuth flow against the fake', () => {
  it('asks for the datamanager scope, offline access and consent', () => {
    const url = new URL(authorizeUrl(googleOAuth, settings, { state: 's', redirectUri, codeChallenge: 'c' }));
    expect(url.searchParams.get('scope')).toBe('https://www.googleapis.com/auth/datamanager');
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('prompt')).toBe('consent');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  });

  it('exchanges the code with its verifier, then refreshes the access token', async () => {
    const pair = pkcePair();
    const back = await authorize(pair.challenge);
    expect(back.searchParams.get('state')).toBe('st-1');
    const exchanged = await exchangeCode(googleOAuth, settings, { code: back.searchParams.get('code')!, redirectUri, codeVerifier: pair.verifier }, call);
    expect(exchanged.ok).toBe(true);
    if (!exchanged.ok) return;
    expect(exchanged.tokens.refreshToken).toBeTruthy();
    expect(exchanged.tokens.expiresAt.getTime()).toBe(NOW.getTime() + 3599_000);
    const refreshed = await refreshAccessToken(googleOAuth, settings, exchanged.tokens.refreshToken!, call);
    expect(refreshed.ok && refreshed.tokens.accessToken).toMatch(/^ya29\.fake-/);
  });

  it('refuses a code exchanged with the wrong verifier as invalid_grant', async () => {
    const back = await authorize(pkcePair().challenge);
    const result = await exchangeCode(googleOAuth, settings, { code: back.searchParams.get('code')!, redirectUri, codeVerifier: pkcePair().verifier }, call);
    expect(result).toMatchObject({ ok: false, kind: 'invalid_grant' });
  });

  it('turns a revoked refresh token into a reauthorization, without the token in the error', async () => {
    const pair = pkcePair();
    const back = await authorize(pair.challenge);
    const exchanged = await exchangeCode(googleOAuth, settings, { code: back.searchParams.get('code')!, redirectUri, codeVerifier: pair.verifier }, call);
    if (!exchanged.ok) throw new Error('exchange failed');
    google.revokeRefreshTokens();
    const result = await refreshAccessToken(googleOAuth, settings, exchanged.tokens.refreshToken!, call);
    expect(result).toMatchObject({ ok: false, kind: 'invalid_grant', error: { code: 'reauthorization_required' } });
    expect(JSON.stringify(result)).not.toContain(exchanged.tokens.refreshToken!);
  });

  it('treats a token endpoint outage as transient', async () => {
    google.server.respondWith({ kind: 'tokenServerError', status: 503 });
    const result = await refreshAccessToken(googleOAuth, settings, 'whatever', call);
    expect(result).toMatchObject({ ok: false, kind: 'transient' });
  });

  it("treats a wrong client secret as a refusal of the service's client (the operator's settings), not of the grant", async () => {
    const wrong = loadSettings({ CNV_GOOGLE_OAUTH_TOKEN_URL: google.urls.token, CNV_GOOGLE_OAUTH_CLIENT_ID: google.client.id, CNV_GOOGLE_OAUTH_CLIENT_SECRET: 'nope' });
    expect(await refreshAccessToken(googleOAuth, wrong, 'x', call)).toMatchObject({ ok: false, kind: 'client_refused', oauthError: 'invalid_client', error: { status: 401 } });
  });
});
