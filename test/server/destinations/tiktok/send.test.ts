import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeTikTok, type FakeTikTok } from '../../../../src/demo/fakes/tiktok';
import { tiktokPlatform } from '../../../../src/server/destinations/tiktok';
import { NOW, tiktokContext, tiktokInput } from './fixtures';

let fake: FakeTikTok;
beforeAll(async () => {
  fake = await startFakeTikTok({ now: () => NOW });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('sending a batch to TikTok', () => {
  it('delivers a batch in one request the strict fake accepts, with the token only in the Access-Token header', async () => {
    const inputs = [tiktokInput({ eventId: 'evt_a', customerEventId: 'a' }), tiktokInput({ eventId: 'evt_b', customerEventId: 'b', trigger: 'form_submission' })];
    const outcomes = await tiktokPlatform.sendBatch(inputs, tiktokContext(fake.url));
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.problems).toEqual([]);
    expect(request!.path).toBe('/open_api/v1.3/event/track/');
    expect(request!.query.toString()).toBe('');
    expect(request!.body.test_event_code).toBeUndefined();
    expect(fake.counted().map((c) => [c.event.event, c.event.event_id])).toEqual([['CompleteRegistration', 'a'], ['Lead', 'b']]);
    expect(outcomes[0]).toMatchObject({ kind: 'delivered', request: { batch_size: 2 }, platformRequestId: expect.any(String) });
  });

  it('delivers value, currency and the hashed customer id as the strict fake checks them, and the fake refuses them off the documents', async () => {
    const outcomes = await tiktokPlatform.sendBatch([tiktokInput({ value: 29.99, currency: 'EUR', customerId: 'acct_7' })], tiktokContext(fake.url));
    expect(outcomes[0]?.kind).toBe('delivered');
    expect(fake.requests[0]!.problems).toEqual([]);
    const off = await fetch(`${fake.url}/open_api/v1.3/event/track/`, {
      method: 'POST', headers: { 'access-token': tiktokContext(fake.url).connection.credentials.access_token!, 'content-type': 'application/json' },
      body: JSON.stringify({
        event_source: 'web', event_source_id: tiktokContext(fake.url).connection.settings.pixel_code,
        data: [{ event: 'Purchase', event_time: Math.floor(NOW.getTime() / 1000), user: { external_id: 'acct_7' }, properties: { value: '29.99', revenue: 1 } }],
      }),
    });
    expect(await off.json()).toMatchObject({ code: 40002 });
    expect(fake.requests[1]!.problems).toEqual(expect.arrayContaining([
      expect.stringContaining('user.external_id must be SHA-256'),
      expect.stringContaining('properties.revenue is not a property'),
      expect.stringContaining('properties.value must be a number'),
    ]));
  });

  it('counts a resend of the same conversion once (TikTok deduplicates on event_id) and calls it delivered', async () => {
    await tiktokPlatform.sendBatch([tiktokInput()], tiktokContext(fake.url));
    const again = await tiktokPlatform.sendBatch([tiktokInput({ eventId: 'evt_retry' })], tiktokContext(fake.url));
    expect(again[0]?.kind).toBe('delivered');
    expect(fake.counted()).toHaveLength(1);
    expect(fake.duplicates()).toBe(1);
  });

  it('retries a rate-limited request (code 40100) after TikTok’s Retry-After, then delivers', async () => {
    fake.respondWith({ kind: 'rate_limit', retryAfterSeconds: 60 });
    const first = await tiktokPlatform.sendBatch([tiktokInput()], tiktokContext(fake.url));
    expect(first[0]).toMatchObject({ kind: 'retry', afterMs: 60_000, error: { code: 'rate_limited' } });
    const second = await tiktokPlatform.sendBatch([tiktokInput()], tiktokContext(fake.url));
    expect(second[0]?.kind).toBe('delivered');
  });

  it('hands a refused token to delivery’s token mechanism for every event, with a plain hint', async () => {
    const outcomes = await tiktokPlatform.sendBatch([tiktokInput(), tiktokInput({ eventId: 'e2' })], tiktokContext(fake.url, { token: 'x'.repeat(40) }));
    expect(outcomes.map((o) => o.kind)).toEqual(['token_refused', 'token_refused']);
    expect(outcomes[0]).toMatchObject({ error: { code: 'invalid_token', hint: expect.stringContaining('Events Manager') } });
    expect(fake.requests).toHaveLength(1); // a connection fault is not split
  });

  it('isolates the event TikTok refuses by halving the batch, delivering the others', async () => {
    // Planned refusals stand for a rule of TikTok's cnv cannot check itself, broken by u4 alone.
    fake.respondWith('invalid_parameter', 'accept', 'invalid_parameter', 'accept', 'invalid_parameter');
    const inputs = ['u1', 'u2', 'u3', 'u4'].map((id) => tiktokInput({ eventId: `evt_${id}`, customerEventId: id }));
    const outcomes = await tiktokPlatform.sendBatch(inputs, tiktokContext(fake.url));
    // 4 refused → [u1,u2] ok → [u3,u4] refused → [u3] ok, [u4] refused.
    expect(fake.requests.map((r) => r.body.data.length)).toEqual([4, 2, 2, 1, 1]);
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered', 'delivered', 'failed']);
    expect(outcomes[3]).toMatchObject({ error: { code: 'invalid_parameter', hint: expect.any(String) } });
  });

  it('retries when TikTok does not answer in time', async () => {
    fake.respondWith('hang');
    const outcomes = await tiktokPlatform.sendBatch([tiktokInput()], tiktokContext(fake.url, { timeoutMs: 200 }));
    expect(outcomes[0]).toMatchObject({ kind: 'retry', error: { code: 'timeout' } });
  });
});

describe('testing a TikTok connection', () => {
  it('sends one custom test event with the connection’s test event code', async () => {
    const result = await tiktokPlatform.testConnection(tiktokContext(fake.url, { testEventCode: 'TEST98765' }));
    expect(result).toMatchObject({ ok: true, message: expect.stringContaining('TEST98765') });
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(fake.counted()).toEqual([expect.objectContaining({ testEventCode: 'TEST98765', event: expect.objectContaining({ event: 'CnvConnectionTest' }) })]);
  });

  it('says what TikTok refused', async () => {
    const result = await tiktokPlatform.testConnection(tiktokContext(fake.url, { pixelCode: 'C4OTHERPIXEL00000000' }));
    expect(result).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });
});
