import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeMicrosoftAds, type FakeMicrosoftAds } from '../../../../src/demo/fakes/microsoft-ads';
import { ReauthorizationRequired } from '../../../../src/server/destinations/destination';
import { microsoftAdsPlatform } from '../../../../src/server/destinations/microsoft-ads';
import { CLICK_ID, NOW, context, input } from './fixtures';

let fake: FakeMicrosoftAds;
const ctx = (overrides: Parameters<typeof context>[2] = {}) => context(fake.env, async () => fake.issueAccessToken(), overrides);

beforeAll(async () => {
  fake = await startFakeMicrosoftAds({
    now: () => NOW,
    goals: [
      { name: 'Signup', createdAt: new Date('2026-01-01T00:00:00Z') },
      { name: 'Fresh goal', createdAt: new Date(NOW.getTime() - 30 * 60_000) },
    ],
  });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.applied.length = 0;
});

describe('sending a batch to Microsoft Advertising', () => {
  it('applies the batch in one call the fake finds well-formed and delivers each conversion', async () => {
    const outcomes = await microsoftAdsPlatform.sendBatch([input(), input({ eventActionId: 'eva_2', clickIds: {}, identity: { phone: '+14255551234' } })], ctx());
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(fake.requests[0]!.path).toBe('/CampaignManagement/v13/OfflineConversions/Apply');
    expect(fake.applied.map((a) => [a.conversionName, a.microsoftClickId, a.hashedPhoneNumber !== null])).toEqual([
      ['Signup', CLICK_ID, false],
      ['Signup', null, true],
    ]);
    expect(outcomes[0]).toMatchObject({ request: { microsoft_click_id: CLICK_ID, tracking_id: 'fake-tracking-id' }, platformRequestId: 'fake-tracking-id' });
  });

  it('reads partial errors per row: a wrong goal name fails, a goal under two hours old waits, the rest is delivered', async () => {
    const outcomes = await microsoftAdsPlatform.sendBatch(
      [input(), input({ actionConfig: { conversion_name: 'signup' } }), input({ actionConfig: { conversion_name: 'Fresh goal' } })],
      ctx(),
    );
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'failed', 'retry_later']);
    expect(outcomes[1]).toMatchObject({ error: { code: 'conversion_goal_not_found' } });
    expect(fake.applied).toHaveLength(1);
  });

  it('decides rows that cannot go without sending them, and sends nothing when none can', async () => {
    const outcomes = await microsoftAdsPlatform.sendBatch([input({ clickIds: {}, identity: {} })], ctx());
    expect(outcomes).toMatchObject([{ kind: 'failed', error: { code: 'no_match_key' } }]);
    expect(fake.requests).toHaveLength(0);
  });

  it('counts a resent conversion once: Microsoft ignores the same click id and time', async () => {
    await microsoftAdsPlatform.sendBatch([input()], ctx());
    const again = await microsoftAdsPlatform.sendBatch([input()], ctx());
    expect(again[0]!.kind).toBe('delivered');
    expect(fake.applied.map((a) => a.duplicate)).toEqual([false, true]);
  });

  it('retries the whole batch after 60 seconds when Microsoft throttles', async () => {
    fake.respondWith({ kind: 'fault', status: 429, code: 117, errorCode: 'CallRateExceeded' });
    const outcomes = await microsoftAdsPlatform.sendBatch([input(), input()], ctx());
    expect(outcomes).toMatchObject([
      { kind: 'retry', afterMs: 60_000, error: { code: 'rate_limited' } },
      { kind: 'retry', afterMs: 60_000 },
    ]);
  });

  it('retries on a 500 internal error', async () => {
    fake.respondWith({ kind: 'fault', status: 500, code: 0, errorCode: 'InternalError' });
    expect((await microsoftAdsPlatform.sendBatch([input()], ctx()))[0]).toMatchObject({ kind: 'retry', error: { code: 'platform_error', status: 500 } });
  });

  it('retries when Microsoft does not answer in time', async () => {
    fake.respondWith({ kind: 'hang' });
    expect((await microsoftAdsPlatform.sendBatch([input()], ctx({ timeoutMs: 200 })))[0]).toMatchObject({ kind: 'retry', error: { code: 'timeout' } });
  });

  it('fails with a hint when the connection points at an account the user cannot use', async () => {
    const outcomes = await microsoftAdsPlatform.sendBatch([input()], ctx({ connection: { id: 'dst', settings: { customer_id: '1', account_id: '2' }, credentials: {} } }));
    expect(outcomes[0]).toMatchObject({ kind: 'failed', error: { code: 'not_authorized', status: 403, hint: expect.any(String) } });
  });

  it('fails with a hint when no developer token is set anywhere', async () => {
    const outcomes = await microsoftAdsPlatform.sendBatch([input()], context({ ...fake.env, CNV_MICROSOFT_ADS_DEVELOPER_TOKEN: '' }, async () => fake.issueAccessToken()));
    expect(outcomes[0]).toMatchObject({ kind: 'failed', error: { code: 'developer_token_missing', hint: expect.stringContaining('CNV_MICROSOFT_ADS_DEVELOPER_TOKEN') } });
    expect(fake.requests).toHaveLength(0);
  });

  it('lets a refused refresh token through to delivery, which makes the conversions wait for a new sign-in', async () => {
    const send = microsoftAdsPlatform.sendBatch([input()], ctx({ accessToken: async () => Promise.reject(new ReauthorizationRequired('microsoft-ads')) }));
    await expect(send).rejects.toBeInstanceOf(ReauthorizationRequired);
  });

  it('takes up to 1,000 conversions per call, as Microsoft documents', () => {
    expect(microsoftAdsPlatform.maxBatchSize).toBe(1000);
  });
});

describe('testing a Microsoft Advertising connection', () => {
  it('lists the offline conversion goals without recording a conversion', async () => {
    const result = await microsoftAdsPlatform.testConnection(ctx());
    expect(result).toEqual({
      ok: true,
      message: "Connected to Microsoft Advertising account 987654321 (customer 123456789). Offline conversion goals: 'Signup', 'Fresh goal'.",
      actionNames: { field: 'conversion_name', names: ['Signup', 'Fresh goal'], what: 'offline conversion goal' },
    });
    expect(fake.requests.map((r) => r.path)).toEqual(['/CampaignManagement/v13/ConversionGoals/QueryByIds']);
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(fake.applied).toHaveLength(0);
  });

  it('reports refused credentials as not ok', async () => {
    const result = await microsoftAdsPlatform.testConnection(context(fake.env, async () => 'not-a-token-the-fake-issued'));
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_credentials', status: 401 } });
  });
});
