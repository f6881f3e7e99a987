import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ReauthorizationRequired } from '../../../../src/server/destinations/destination';
import { linkedinPlatform } from '../../../../src/server/destinations/linkedin';
import { startLinkedInFake, type LinkedInFake } from '../../../../src/demo/fakes/linkedin';
import { context, input, NOW } from './inputs';

let fake: LinkedInFake;
let token: string;

beforeAll(async () => {
  fake = await startLinkedInFake({
    now: () => NOW,
    adAccounts: [
      { id: '507404993', role: 'ACCOUNT_MANAGER' },
      { id: '600000001', role: 'VIEWER' },
    ],
    conversionRules: [
      { id: '104012', account: '507404993' },
      { id: '104013', account: '507404993' },
      { id: '300000', account: '600000001' },
    ],
  });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  token = fake.issueAccessToken();
});

describe('LinkedIn sendBatch against the fake', () => {
  it('sends one well-formed batch create and delivers every event', async () => {
    const outcomes = await linkedinPlatform.sendBatch([input(), input({ eventId: 'evt_02', clickIds: {}, cookies: { li_fat_id: 'cookie-id' } })], context(fake.url, token));
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.problems).toEqual([]);
    expect(request!.path).toBe('/rest/conversionEvents');
    expect(request!.headers['linkedin-version']).toBe('202607');
    expect(request!.body.elements[1].user.userIds).toEqual([{ idType: 'SHA256_EMAIL', idValue: expect.any(String) }, { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'cookie-id' }]);
  });

  it('delivers a resend of the same conversion once: LinkedIn deduplicates on eventId', async () => {
    const before = fake.events.length;
    await linkedinPlatform.sendBatch([input({ eventId: 'evt_dup' })], context(fake.url, token));
    const again = await linkedinPlatform.sendBatch([input({ eventId: 'evt_dup' })], context(fake.url, token));
    expect(again[0]!.kind).toBe('delivered');
    expect(fake.events.length).toBe(before + 1);
    expect(fake.duplicates).toBeGreaterThan(0);
  });

  it('sends a conversion reported a few minutes ahead of the clock with the sending time, and LinkedIn takes it', async () => {
    const outcomes = await linkedinPlatform.sendBatch([input({ eventId: 'evt_ahead', occurredAt: new Date(NOW.getTime() + 4 * 60_000) })], context(fake.url, token));
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(outcomes[0]!.kind).toBe('delivered');
    expect(fake.requests[0]!.body.elements[0].conversionHappenedAt).toBe(NOW.getTime());
  });

  it('sends a customer_event_id longer than LinkedIn’s 64-character eventId as a stable 64-character hash', async () => {
    const long = `order-${'x'.repeat(150)}`;
    const first = await linkedinPlatform.sendBatch([input({ eventId: 'evt_long', customerEventId: long })], context(fake.url, token));
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(first[0]!.kind).toBe('delivered');
    const sent = fake.requests[0]!.body.elements[0].eventId as string;
    expect(sent).toMatch(/^[0-9a-f]{64}$/);
    await linkedinPlatform.sendBatch([input({ eventId: 'evt_long', customerEventId: long })], context(fake.url, token));
    expect(fake.requests[1]!.body.elements[0].eventId).toBe(sent);
  });

  it('fails an event without any user id before sending, and still sends the others', async () => {
    const outcomes = await linkedinPlatform.sendBatch([input({ clickIds: {}, identity: {} }), input({ eventId: 'evt_03' })], context(fake.url, token));
    expect(outcomes[0]).toMatchObject({ kind: 'failed', error: { code: 'no_user_id' } });
    expect(outcomes[1]!.kind).toBe('delivered');
    expect(fake.requests[0]!.body.elements).toHaveLength(1);
  });

  it('reads per-element statuses back to each event', async () => {
    fake.respondWith({ kind: 'elements', statuses: [201, 400, 409] });
    const outcomes = await linkedinPlatform.sendBatch([input({ eventId: 'a' }), input({ eventId: 'b' }), input({ eventId: 'c' })], context(fake.url, token));
    expect(outcomes[0]).toMatchObject({ kind: 'delivered' });
    expect(outcomes[1]).toMatchObject({ kind: 'failed', error: { status: 400 } });
    expect(outcomes[2]).toMatchObject({ kind: 'delivered', duplicate: true });
  });

  it('sends one call per conversion rule, so a refused rule only fails its own events', async () => {
    const outcomes = await linkedinPlatform.sendBatch(
      [input({ eventId: 'a' }), input({ eventId: 'b', actionConfig: { conversion_rule: '999' } }), input({ eventId: 'c', actionConfig: { conversion_rule: '104013' } })],
      context(fake.url, token),
    );
    expect(fake.requests).toHaveLength(3);
    expect(outcomes[0]!.kind).toBe('delivered');
    expect(outcomes[1]).toMatchObject({ kind: 'failed', error: { code: 'invalid_conversion_rule' } });
    expect(outcomes[2]!.kind).toBe('delivered');
  });

  it('fails with a permission hint when the member is only a viewer of the rule\'s ad account', async () => {
    const outcomes = await linkedinPlatform.sendBatch([input({ actionConfig: { conversion_rule: '300000' } })], context(fake.url, token));
    expect(outcomes[0]).toMatchObject({ kind: 'failed', error: { code: 'permission_denied', status: 403 } });
  });

  it('retries every event of a batch LinkedIn answered 500', async () => {
    fake.respondWith({ kind: 'http', status: 500 });
    const outcomes = await linkedinPlatform.sendBatch([input(), input({ eventId: 'evt_02' })], context(fake.url, token));
    expect(outcomes.map((o) => o.kind)).toEqual(['retry', 'retry']);
  });

  it('retries a throttled batch after the Retry-After LinkedIn sent', async () => {
    fake.respondWith({ kind: 'http', status: 429, retryAfter: '120' });
    const [outcome] = await linkedinPlatform.sendBatch([input()], context(fake.url, token));
    expect(outcome).toMatchObject({ kind: 'retry', afterMs: 120_000, error: { code: 'rate_limited' } });
  });

  it('retries when LinkedIn does not answer within the timeout', async () => {
    fake.respondWith({ kind: 'hang' });
    const [outcome] = await linkedinPlatform.sendBatch([input()], context(fake.url, token, { timeoutMs: 200 }));
    expect(outcome).toMatchObject({ kind: 'retry', error: { code: 'timeout' } });
  });

  it('reports a revoked token as refused (delivery refreshes), and lets a refused refresh token through to delivery', async () => {
    const [revoked] = await linkedinPlatform.sendBatch([input()], context(fake.url, 'not-a-token'));
    expect(revoked).toMatchObject({ kind: 'token_refused', error: { status: 401 } });
    const refused = context(fake.url, async () => {
      throw new ReauthorizationRequired('linkedin');
    });
    await expect(linkedinPlatform.sendBatch([input()], refused)).rejects.toBeInstanceOf(ReauthorizationRequired);
    expect(fake.requests).toHaveLength(1);
  });

  it('fails every event with a version hint when the LinkedIn-Version is sunset', async () => {
    const sunset = await startLinkedInFake({ now: () => NOW, sunsetVersions: ['202510'] });
    try {
      const ctx = context(sunset.url, sunset.issueAccessToken(), { env: { CNV_LINKEDIN_API_VERSION: '202510' } });
      const [outcome] = await linkedinPlatform.sendBatch([input()], ctx);
      expect(outcome).toMatchObject({ kind: 'failed', error: { code: 'api_version_sunset', status: 426 } });
    } finally {
      await sunset.close();
    }
  });

  it('isolates the refused event when LinkedIn refuses a whole batch, delivering the others', async () => {
    // The first call is refused whole; the halves are then answered as LinkedIn would, and the bad half refused again.
    fake.respondWith({ kind: 'http', status: 400, message: 'Invalid element' }, { kind: 'http', status: 400, message: 'Invalid element' });
    const inputs = [input({ eventId: 'a' }), input({ eventId: 'b' }), input({ eventId: 'c' }), input({ eventId: 'd' })];
    const outcomes = await linkedinPlatform.sendBatch(inputs, context(fake.url, token));
    // Calls: [a b c d] refused, [a b] refused, [a] ok, [b] ok, [c d] ok.
    const ids = (r: { body: { elements: { eventId: string }[] } }) => r.body.elements.map((e) => e.eventId.replace('signup-', '')).join('');
    expect(fake.requests.map(ids)).toEqual(['abcd', 'ab', 'a', 'b', 'cd']);
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });

  it('fails only the single event LinkedIn keeps refusing once it stands alone', async () => {
    fake.respondWith({ kind: 'http', status: 422, message: 'Invalid field' }, { kind: 'elements', statuses: [201] }, { kind: 'http', status: 422, message: 'Invalid field' });
    const outcomes = await linkedinPlatform.sendBatch([input({ eventId: 'a' }), input({ eventId: 'b' })], context(fake.url, token));
    expect(outcomes[0]!.kind).toBe('delivered');
    expect(outcomes[1]).toMatchObject({ kind: 'failed', error: { status: 422 } });
  });
});

describe('LinkedIn testConnection against the fake', () => {
  it('passes for a member who manages the connected ad account and counts its Conversions API rules', async () => {
    const result = await linkedinPlatform.testConnection(context(fake.url, token));
    expect(result).toEqual({ ok: true, message: 'Connected to LinkedIn ad account 507404993 as ACCOUNT_MANAGER; it has 2 enabled Conversions API rules.' });
    expect(fake.requests.every((r) => r.problems.length === 0 && r.method === 'GET')).toBe(true);
  });

  it('fails for a member who is only a viewer of the ad account, and records nothing', async () => {
    const ctx = context(fake.url, token);
    const viewer = { ...ctx, connection: { ...ctx.connection, settings: { ad_account_id: '600000001' } } };
    const result = await linkedinPlatform.testConnection(viewer);
    expect(result).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(fake.requests.some((r) => r.path === '/rest/conversionEvents')).toBe(false);
  });

  it('fails with a reauthorize hint when the token is no longer valid', async () => {
    const result = await linkedinPlatform.testConnection(context(fake.url, 'expired'));
    expect(result).toMatchObject({ ok: false, error: { code: 'token_refused', hint: expect.stringMatching(/connect_destination/) } });
  });
});
