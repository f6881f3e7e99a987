import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeMicrosoftAds, type FakeMicrosoftAds } from '../../../src/demo/fakes/microsoft-ads';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const CLICK = '2f1a6b1c9e3d4c5ba0f1e2d3c4b5a697';
const HASH = 'ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602';
const REDIRECT = 'http://127.0.0.1:9/oauth/callback';
const VERIFIER = 'a-verifier-of-more-than-forty-three-characters-0123456789';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

let fake: FakeMicrosoftAds;

beforeAll(async () => {
  fake = await startFakeMicrosoftAds({
    now: () => NOW,
    goals: [{ name: 'Signup', createdAt: new Date('2026-01-01T00:00:00Z') }],
    clicks: { [CLICK]: new Date('2026-11-20T08:00:00Z') },
  });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.applied.length = 0;
});

function authorizeUrl(overrides: Record<string, string | null> = {}): string {
  const params: Record<string, string | null> = {
    client_id: fake.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    response_mode: 'query',
    scope: 'https://ads.microsoft.com/msads.manage offline_access',
    state: 'state-123',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const url = new URL(fake.authorizeUrl);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url.toString();
}

async function consent(): Promise<string> {
  const response = await fetch(authorizeUrl(), { redirect: 'manual' });
  return new URL(response.headers.get('location')!).searchParams.get('code')!;
}

function tokenRequest(form: Record<string, string>) {
  return fetch(fake.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
}

async function exchange(code: string, verifier = VERIFIER) {
  return tokenRequest({ grant_type: 'authorization_code', client_id: fake.clientId, client_secret: fake.clientSecret, code, redirect_uri: REDIRECT, code_verifier: verifier });
}

function apply(body: unknown, headers: Record<string, string> = {}, token = fake.issueAccessToken()) {
  return fetch(`${fake.url}/CampaignManagement/v13/OfflineConversions/Apply`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Authorization: `Bearer ${token}`, DeveloperToken: fake.developerToken, CustomerId: fake.customerId, CustomerAccountId: fake.accountId, ...headers },
    body: JSON.stringify(body),
  });
}

const row = (overrides: Record<string, unknown> = {}) => ({ ConversionName: 'Signup', ConversionTime: '2026-11-21T09:00:00.000Z', MicrosoftClickId: CLICK, ...overrides });

async function partialErrorsOf(rows: unknown[]) {
  const response = await apply({ OfflineConversions: rows });
  expect(response.status).toBe(200);
  return ((await response.json()) as { PartialErrors: { Index: number; Code: number; ErrorCode: string }[] }).PartialErrors;
}

describe("the fake's Microsoft sign-in", () => {
  it('consents at once: redirects to redirect_uri with a code and the state', async () => {
    const response = await fetch(authorizeUrl(), { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('state-123');
    expect(location.searchParams.get('code')).toBeTruthy();
  });

  it('refuses an authorize request without PKCE S256, without the Advertising scope, or for another app', async () => {
    const cases: Record<string, string | null>[] = [{ code_challenge_method: 'plain' }, { code_challenge: null }, { scope: 'openid offline_access' }, { client_id: 'someone-else' }];
    for (const overrides of cases) {
      const response = await fetch(authorizeUrl(overrides), { redirect: 'manual' });
      expect(response.status).toBe(400);
    }
    expect(fake.requests.every((r) => r.problems.length > 0)).toBe(true);
  });

  it('redeems a code once, with the verifier that matches its challenge, for an access and a refresh token', async () => {
    const code = await consent();
    const wrong = await exchange(code, 'another-verifier-of-more-than-forty-three-characters-000');
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const right = await exchange(code);
    expect(right.status).toBe(200);
    expect(await right.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600, access_token: expect.any(String), refresh_token: expect.any(String), scope: 'https://ads.microsoft.com/msads.manage' });
    expect((await exchange(code)).status).toBe(400);
  });

  it('refuses a wrong client secret, also in HTTP Basic', async () => {
    const code = await consent();
    const response = await tokenRequest({ grant_type: 'authorization_code', client_id: fake.clientId, client_secret: 'nope', code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
    const basic = (secret: string) =>
      fetch(fake.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${fake.clientId}:${secret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
      });
    expect((await basic('nope')).status).toBe(401);
    expect((await basic(fake.clientSecret)).status).toBe(200);
  });

  it('refreshes an access token the API then accepts, until told to answer invalid_grant', async () => {
    const tokens = (await (await exchange(await consent())).json()) as { refresh_token: string };
    const refresh = () => tokenRequest({ grant_type: 'refresh_token', client_id: fake.clientId, client_secret: fake.clientSecret, refresh_token: tokens.refresh_token, scope: 'https://ads.microsoft.com/msads.manage offline_access' });
    const renewed = (await (await refresh()).json()) as { access_token: string };
    expect((await apply({ OfflineConversions: [row()] }, {}, renewed.access_token)).status).toBe(200);
    fake.respondWith({ kind: 'invalid_grant' });
    const refused = await refresh();
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant', error_codes: [70000] });
    fake.revokeRefreshTokens();
    expect((await refresh()).status).toBe(400);
  });
});

describe("the fake's ApplyOfflineConversions", () => {
  it('applies a well-formed conversion and answers with empty PartialErrors and a TrackingId', async () => {
    const response = await apply({ OfflineConversions: [row({ HashedEmailAddress: HASH, ConversionValue: 10, ConversionCurrencyCode: 'USD' })] });
    expect(response.status).toBe(200);
    expect(response.headers.get('trackingid')).toBeTruthy();
    expect(await response.json()).toEqual({ PartialErrors: [] });
    expect(fake.applied).toMatchObject([{ conversionName: 'Signup', microsoftClickId: CLICK, hashedEmailAddress: HASH, conversionValue: 10, duplicate: false }]);
    expect(fake.requests[0]!.problems).toEqual([]);
  });

  it('refuses a call without the four headers, with an unknown token, or for an account the user cannot use', async () => {
    expect(await (await apply({ OfflineConversions: [row()] }, { CustomerAccountId: '' })).json()).toMatchObject({ Type: 'AdApiFaultDetail', Errors: [{ Code: 116 }] });
    const unknown = await apply({ OfflineConversions: [row()] }, {}, 'forged');
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ Errors: [{ Code: 105, ErrorCode: 'InvalidCredentials' }] });
    const expired = await apply({ OfflineConversions: [row()] }, {}, fake.issueAccessToken({ expiresInSeconds: -1 }));
    expect(await expired.json()).toMatchObject({ Errors: [{ Code: 109 }] });
    const elsewhere = await apply({ OfflineConversions: [row()] }, { CustomerAccountId: '1' });
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.json()).toMatchObject({ Errors: [{ Code: 106, ErrorCode: 'UserIsNotAuthorized' }] });
  });

  it('refuses an empty list and more than 1,000 conversions as a whole', async () => {
    expect(await (await apply({ OfflineConversions: [] })).json()).toMatchObject({ Type: 'ApiFaultDetail', OperationErrors: [{ Code: 5600 }] });
    expect(await (await apply({ OfflineConversions: Array.from({ length: 1001 }, () => row()) })).json()).toMatchObject({ OperationErrors: [{ Code: 5601 }] });
  });

  it('reports each bad conversion by its index with Microsoft’s code', async () => {
    const errors = await partialErrorsOf([
      row(),
      row({ ConversionName: 'signup' }),
      row({ ConversionTime: '2026-11-21 09:00:00' }),
      row({ ConversionTime: '2026-11-21T11:00:00Z' }),
      row({ ConversionTime: '2026-07-01T00:00:00Z' }),
      row({ MicrosoftClickId: 'not-a-click' }),
      row({ MicrosoftClickId: undefined }),
      row({ MicrosoftClickId: undefined, HashedEmailAddress: 'john@contoso.com' }),
      row({ ConversionCurrencyCode: 'XYZ', ConversionValue: 1 }),
      row({ ConversionTime: '2026-11-20T07:00:00Z' }),
    ]);
    expect(errors.map((e) => [e.Index, e.Code])).toEqual([
      [1, 5606],
      [2, 5607],
      [3, 5614],
      [4, 5609],
      [5, 5604],
      [6, 5603],
      [7, 8004],
      [8, 5611],
      [9, 5616],
    ]);
    expect(fake.applied).toHaveLength(1);
  });

  it("takes the currencies of Microsoft's Conversion Goal Revenue list, and no other", async () => {
    // learn.microsoft.com/advertising/guides/currencies#conversiongoalrevenue, which OfflineConversion's
    // ConversionCurrencyCode points to ("For more information, see Currencies"): KWD, CNY and THB are on it, NPR is not.
    const rows = ['KWD', 'CNY', 'THB', 'EUR', 'NPR'].map((code, i) => row({ ConversionCurrencyCode: code, ConversionValue: 1, ConversionTime: `2026-11-21T09:00:0${i}.000Z` }));
    expect((await partialErrorsOf(rows)).map((e) => [e.Index, e.Code])).toEqual([[4, 5611]]);
  });

  it('accepts a conversion without click id when a hashed email or phone is given', async () => {
    expect(await partialErrorsOf([row({ MicrosoftClickId: undefined, HashedPhoneNumber: HASH })])).toEqual([]);
  });

  it('refuses conversions for a goal created less than two hours ago', async () => {
    fake.goals.push({ name: 'New', createdAt: new Date(NOW.getTime() - 60_000) });
    try {
      expect((await partialErrorsOf([row({ ConversionName: 'New' })]))[0]).toMatchObject({ Code: 5615, ErrorCode: 'OfflineConversionNotAcceptedForGoal' });
    } finally {
      fake.goals.pop();
    }
  });

  it('ignores a second conversion with the same click id and time, as Microsoft does', async () => {
    expect(await partialErrorsOf([row(), row()])).toEqual([]);
    expect(fake.applied.map((a) => a.duplicate)).toEqual([false, true]);
  });

  it('notes fields OfflineConversion does not define', async () => {
    await partialErrorsOf([row({ Email: 'john@contoso.com' })]);
    expect(fake.requests[0]!.problems).toEqual(['OfflineConversions[0] has a field OfflineConversion does not define: Email']);
  });

  it('answers as planned: a fault, a bare status, added partial errors, or never', async () => {
    fake.respondWith(
      { kind: 'fault', status: 500, code: 0, errorCode: 'InternalError' },
      { kind: 'status', status: 503, headers: { 'retry-after': '3' } },
      { kind: 'partial_errors', errors: [{ Index: 0, Code: 5612, ErrorCode: 'OfflineConversionsApplyFailed' }] },
      { kind: 'hang' },
    );
    const internal = await apply({ OfflineConversions: [row()] });
    expect(internal.status).toBe(500);
    expect(await internal.json()).toMatchObject({ Errors: [{ Code: 0, ErrorCode: 'InternalError' }] });
    const unavailable = await apply({ OfflineConversions: [row()] });
    expect([unavailable.status, unavailable.headers.get('retry-after')]).toEqual([503, '3']);
    expect((await (await apply({ OfflineConversions: [row()] })).json()) as unknown).toMatchObject({ PartialErrors: [{ Index: 0, Code: 5612 }] });
    await expect(
      fetch(`${fake.url}/CampaignManagement/v13/OfflineConversions/Apply`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(150) }),
    ).rejects.toThrow();
  });

  it('lists the offline conversion goals for GetConversionGoalsByIds', async () => {
    const response = await fetch(`${fake.url}/CampaignManagement/v13/ConversionGoals/QueryByIds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', Authorization: `Bearer ${fake.issueAccessToken()}`, DeveloperToken: fake.developerToken, CustomerId: fake.customerId, CustomerAccountId: fake.accountId },
      body: JSON.stringify({ ConversionGoalIds: null, ConversionGoalTypes: 'OfflineConversion' }),
    });
    expect(await response.json()).toMatchObject({ ConversionGoals: [{ Name: 'Signup', Type: 'OfflineConversion', Status: 'Active' }], PartialErrors: [] });
  });

  it('points cnv settings at itself through env', () => {
    expect(fake.env).toMatchObject({ CNV_MICROSOFT_ADS_API_BASE: fake.url, CNV_MICROSOFT_OAUTH_TOKEN_URL: `${fake.url}/common/oauth2/v2.0/token` });
  });
});
