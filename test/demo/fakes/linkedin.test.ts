import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLinkedInFake, type LinkedInFake } from '../../../src/demo/fakes/linkedin';

const NOW = new Date('2026-11-20T12:00:00.000Z');
const REDIRECT = 'https://cnv.example/hosted/oauth/callback';
let fake: LinkedInFake;

beforeAll(async () => {
  fake = await startLinkedInFake({ now: () => NOW });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function authorizeUrl(params: Record<string, string>): string {
  const url = new URL(fake.authorizeUrl);
  const all = { response_type: 'code', client_id: fake.clientId, redirect_uri: REDIRECT, scope: 'rw_conversions r_ads', state: 'st-1', ...params };
  for (const [k, v] of Object.entries(all)) url.searchParams.set(k, v);
  return url.toString();
}

async function tokenRequest(form: Record<string, string>) {
  const response = await fetch(fake.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: fake.clientId, client_secret: fake.clientSecret, ...form }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function codeFor(params: Record<string, string> = {}): Promise<string> {
  const response = await fetch(authorizeUrl(params), { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(location.searchParams.get('state')).toBe('st-1');
  return location.searchParams.get('code')!;
}

function batch(elements: unknown[], token: string, headers: Record<string, string> = {}) {
  return fetch(`${fake.url}/rest/conversionEvents`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'linkedin-version': '202607',
      'x-restli-protocol-version': '2.0.0',
      'x-restli-method': 'BATCH_CREATE',
      ...headers,
    },
    body: JSON.stringify({ elements }),
  });
}

const good = {
  conversion: 'urn:lla:llaPartnerConversion:104012',
  conversionHappenedAt: NOW.getTime() - 60_000,
  eventId: 'e1',
  user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: '973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b' }] },
};

describe('the LinkedIn fake: OAuth', () => {
  it('consents at once and redirects back with a code and the state', async () => {
    const code = await codeFor();
    expect(code).toMatch(/^AQT_/);
  });

  it('exchanges a code for an access token and a refresh token, checking the PKCE verifier when a challenge was sent', async () => {
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const code = await codeFor({ code_challenge: challenge, code_challenge_method: 'S256' });
    const wrong = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: 'x'.repeat(50) });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const right = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ expires_in: 5_184_000, refresh_token_expires_in: 31_536_000 });
    const used = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(used.body.error).toBe('invalid_grant');
  });

  it('refreshes with the refresh token, and answers invalid_grant when told to', async () => {
    const code = await codeFor();
    const first = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).not.toBe(first.body.access_token);
    expect((await batch([good], String(refreshed.body.access_token))).status).toBe(200);
    fake.respondWith({ kind: 'invalid_grant' });
    expect(await tokenRequest({ grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token) })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('refuses a wrong client secret and a scope without rw_conversions', async () => {
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: 'x', client_secret: 'nope' })).body.error).toBe('invalid_client');
    const response = await fetch(authorizeUrl({ scope: 'r_ads' }), { redirect: 'manual' });
    expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
  });
});

describe('the LinkedIn fake: conversion events', () => {
  it('answers 201 per element for a valid batch and records the event once per eventId', async () => {
    const token = fake.issueAccessToken();
    const response = await batch([good, { ...good, eventId: 'e2' }], token);
    expect(await response.json()).toEqual({ elements: [{ status: 201 }, { status: 201 }] });
    await batch([good], token);
    expect(fake.events.filter((e) => e.eventId === 'e1')).toHaveLength(1);
    expect(fake.requests.every((r) => r.problems.length === 0)).toBe(true);
  });

  it('refuses each element LinkedIn would: seconds, an upper-case hash, a lone first name, an event over 90 days old', async () => {
    const token = fake.issueAccessToken();
    const response = await batch(
      [
        { ...good, conversionHappenedAt: Math.floor(NOW.getTime() / 1000) },
        { ...good, user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: 'A'.repeat(64) }] } },
        { ...good, user: { ...good.user, userInfo: { firstName: 'Jane' } } },
        { ...good, conversionHappenedAt: NOW.getTime() - 91 * 86_400_000 },
        { ...good, user: { userIds: [] } },
      ],
      token,
    );
    const body = (await response.json()) as { elements: Array<{ status: number }> };
    expect(body.elements.map((e) => e.status)).toEqual([400, 400, 400, 400, 400]);
    expect(fake.requests[0]!.problems.length).toBeGreaterThanOrEqual(5);
  });

  it('takes an empty userIds when userInfo carries first and last name', async () => {
    const token = fake.issueAccessToken();
    const response = await batch([{ ...good, user: { userIds: [], userInfo: { firstName: 'Jane', lastName: 'Doe' } } }], token);
    expect(await response.json()).toEqual({ elements: [{ status: 201 }] });
  });

  it('refuses a call without a valid token, version or batch-create header', async () => {
    const token = fake.issueAccessToken();
    expect((await batch([good], 'bad')).status).toBe(401);
    expect((await batch([good], token, { 'linkedin-version': '2026-07' })).status).toBe(400);
    expect((await batch([good], token, { 'x-restli-method': 'CREATE' })).status).toBe(400);
    expect((await batch([good], token, { 'x-restli-protocol-version': '1.0.0' })).status).toBe(400);
  });

  it('answers a planned 429 with its Retry-After, and a planned 500', async () => {
    const token = fake.issueAccessToken();
    fake.respondWith({ kind: 'http', status: 429, retryAfter: '7' }, { kind: 'http', status: 500 });
    const throttled = await batch([good], token);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('7');
    expect((await batch([good], token)).status).toBe(500);
  });
});
