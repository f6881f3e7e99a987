import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeMicrosoftAds, type FakeMicrosoftAds } from '../../../../src/demo/fakes/microsoft-ads';
import type { AdjustmentInput, DeliveryInput } from '../../../../src/server/destinations/destination';
import { microsoftAdsPlatform } from '../../../../src/server/destinations/microsoft-ads';
import { NOW, context, input } from './fixtures';

const DAY_MS = 86_400_000;
let clock = NOW;
let fake: FakeMicrosoftAds;
const ctx = () => context(fake.env, async () => fake.issueAccessToken(), { now: () => clock });

function adjustment(original: DeliveryInput, overrides: Partial<AdjustmentInput> = {}): AdjustmentInput {
  return {
    adjustmentResultId: 'adr_1', adjustmentId: 'refund_1', type: 'restate', value: 19, currency: 'EUR',
    occurredAt: new Date(clock.getTime() - 60_000), original, originalRequest: null, ...overrides,
  };
}

beforeAll(async () => {
  fake = await startFakeMicrosoftAds({ now: () => clock, goals: [{ name: 'Signup', createdAt: new Date('2026-01-01T00:00:00Z') }] });
});
afterAll(() => fake.close());
beforeEach(() => {
  clock = NOW;
  fake.reset();
  fake.applied.length = 0;
});

describe('Microsoft Advertising adjustments and the 90-day window', () => {
  // OfflineConversionAdjustment.ConversionTime: "The date and time must be within the last 90 days, otherwise the
  // operation will fail" (learn.microsoft.com/advertising/campaign-management-service/offlineconversionadjustment).
  const original = input({ occurredAt: new Date(NOW.getTime() - 80 * DAY_MS), touchCapturedAt: new Date(NOW.getTime() - 81 * DAY_MS) });

  it('restates and retracts a conversion of the last 90 days', async () => {
    expect((await microsoftAdsPlatform.sendBatch([original], ctx()))[0]!.kind).toBe('delivered');
    clock = new Date(NOW.getTime() + 9 * DAY_MS); // the conversion is 89 days old now
    const outcomes = await microsoftAdsPlatform.adjustBatch!([adjustment(original), adjustment(original, { adjustmentResultId: 'adr_2', type: 'retract', value: null, currency: null })], ctx());
    expect(outcomes.map((o) => o.kind)).toEqual(['adjusted', 'adjusted']);
  });

  it('sends no adjustment of a conversion older than 90 days: it fails, saying Microsoft adjusts the last 90 days only', async () => {
    expect((await microsoftAdsPlatform.sendBatch([original], ctx()))[0]!.kind).toBe('delivered');
    clock = new Date(NOW.getTime() + 11 * DAY_MS); // the conversion is 91 days old now
    const outcomes = await microsoftAdsPlatform.adjustBatch!([adjustment(original)], ctx());
    expect(outcomes).toEqual([
      expect.objectContaining({ kind: 'failed', error: expect.objectContaining({ code: 'conversion_too_old', message: expect.stringMatching(/more than 90 days ago/) }) }),
    ]);
    expect(fake.requests.filter((r) => r.path.endsWith('/OfflineConversionAdjustments/Apply'))).toHaveLength(0);
  });

  it('the fake refuses such an adjustment as Microsoft documents (OfflineConversionTimeOutOfWindow)', async () => {
    expect((await microsoftAdsPlatform.sendBatch([original], ctx()))[0]!.kind).toBe('delivered');
    clock = new Date(NOW.getTime() + 11 * DAY_MS);
    const res = await fetch(`${fake.env.CNV_MICROSOFT_ADS_API_BASE}/CampaignManagement/v13/OfflineConversionAdjustments/Apply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', Authorization: `Bearer ${await fake.issueAccessToken()}`, DeveloperToken: ctx().settings.microsoft.developerToken || 'dev', CustomerId: '123456789', CustomerAccountId: '987654321' },
      body: JSON.stringify({ OfflineConversionAdjustments: [{ AdjustmentType: 'Retract', AdjustmentTime: new Date(clock.getTime() - 60_000).toISOString(), ConversionName: 'Signup', ConversionTime: original.occurredAt.toISOString(), MicrosoftClickId: original.clickIds.msclkid }] }),
    });
    const body = await res.json();
    expect(body.PartialErrors).toEqual([expect.objectContaining({ Index: 0, Code: 5609, ErrorCode: 'OfflineConversionTimeOutOfWindow' })]);
  });
});
