/**
 * How a token endpoint's refusal is read (destinations/oauth.ts): of the service's own client (RFC 6749 §5.2
 * `invalid_client`, `unauthorized_client`, Google's `deleted_client`, a 401 without `invalid_grant`, as Reddit answers
 * a refused HTTP Basic client), of the grant (`invalid_grant`, whatever the status), an outage, or another refusal. The
 * answers are shaped as each platform's (see its oauth.ts for what was verified); no secret is in any error.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { googleOAuth } from '../../../src/server/destinations/google-ads/oauth';
import { microsoftOAuth } from '../../../src/server/destinations/microsoft-ads/oauth';
import { linkedinOAuth } from '../../../src/server/destinations/linkedin/oauth';
import { redditOAuth } from '../../../src/server/destinations/reddit/oauth';
import { oauthClientRefusedError, refreshAccessToken } from '../../../src/server/destinations/oauth';
import { loadSettings, type Settings } from '../../../src/server/settings';

let server: Server;
let answer: { status: number; body: string } = { status: 200, body: '{}' };
let settings: Settings;
const call = { signal: new AbortController().signal, timeoutMs: 5_000, now: () => new Date('2026-11-29T10:00:00Z') };

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  const env: Record<string, string> = {};
  for (const p of ['GOOGLE', 'MICROSOFT', 'LINKEDIN', 'REDDIT']) {
    env[`CNV_${p}_OAUTH_TOKEN_URL`] = url;
    env[`CNV_${p}_OAUTH_CLIENT_ID`] = 'client-id';
    env[`CNV_${p}_OAUTH_CLIENT_SECRET`] = 'the-client-secret';
  }
  settings = loadSettings(env);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const json = (status: number, value: unknown) => ({ status, body: JSON.stringify(value) });

describe('a refusal of the service OAuth client', () => {
  it.each([
    ['Google, a deleted client', googleOAuth, json(401, { error: 'deleted_client', error_description: 'The OAuth client was deleted.' }), 'deleted_client'],
    ['Google, a wrong secret', googleOAuth, json(401, { error: 'invalid_client', error_description: 'Unauthorized' }), 'invalid_client'],
    ['Microsoft, an expired secret', microsoftOAuth, json(401, { error: 'invalid_client', error_description: 'AADSTS7000222: The provided client secret keys for app are expired.', error_codes: [7000222] }), 'invalid_client'],
    ['Microsoft, an unknown application', microsoftOAuth, json(400, { error: 'unauthorized_client', error_description: "AADSTS700016: Application with identifier 'x' was not found in the directory.", error_codes: [700016] }), 'unauthorized_client'],
    ['LinkedIn, a wrong secret', linkedinOAuth, json(401, { error: 'invalid_client', error_description: 'Client authentication failed' }), 'invalid_client'],
    ['Reddit, a refused HTTP Basic client (401, no OAuth error)', redditOAuth, { status: 401, body: '{"message": "Unauthorized", "error": 401}' }, ''],
  ])('%s', async (_name, provider, given, code) => {
    answer = given;
    const result = await refreshAccessToken(provider, settings, 'a-refresh-token', call);
    expect(result).toMatchObject({ ok: false, kind: 'client_refused', oauthError: code, error: { code: 'oauth_client_refused', status: given.status } });
    expect(JSON.stringify(result)).not.toMatch(/the-client-secret|a-refresh-token/);
  });

  it('is told apart from a refused grant, an outage and a malformed request', async () => {
    answer = json(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
    expect(await refreshAccessToken(googleOAuth, settings, 'rt', call)).toMatchObject({ kind: 'invalid_grant' });
    answer = json(401, { error: 'invalid_grant' });
    expect(await refreshAccessToken(linkedinOAuth, settings, 'rt', call)).toMatchObject({ kind: 'invalid_grant' });
    answer = json(503, { error: 'temporarily_unavailable' });
    expect(await refreshAccessToken(microsoftOAuth, settings, 'rt', call)).toMatchObject({ kind: 'transient' });
    answer = json(400, { error: 'invalid_request', error_description: 'Missing parameter' });
    expect(await refreshAccessToken(googleOAuth, settings, 'rt', call)).toMatchObject({ kind: 'rejected' });
  });

  it('names the settings to fix, never their values', () => {
    const error = oauthClientRefusedError({ type: 'microsoft-ads', label: 'Microsoft Advertising' }, 'invalid_client', 401);
    expect(error).toMatchObject({ code: 'oauth_client_refused', status: 401 });
    expect(error.message).toContain("Microsoft Advertising refused this cnv service's own OAuth client (invalid_client, HTTP 401)");
    expect(error.hint).toContain('CNV_MICROSOFT_OAUTH_CLIENT_ID and CNV_MICROSOFT_OAUTH_CLIENT_SECRET');
  });
});
