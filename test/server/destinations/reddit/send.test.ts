import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeReddit, type FakeReddit } from '../../../../src/demo/fakes/reddit';
import { redditPlatform } from '../../../../src/server/destinations/reddit';
import { NOW, redditContext, redditInput } from './fixtures';

let fake: FakeReddit;
beforeAll(async () => {
  fake = await startFakeReddit({ now: () => NOW });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('sending a batch to Reddit', () => {
  it('delivers a batch in one request the strict fake accepts, with a Bearer token and a descriptive User-Agent', async () => {
    const inputs = [redditInput({ eventId: 'evt_a', customerEventId: 'a' }), redditInput({ eventId: 'evt_b', customerEventId: 'b', trigger: 'form_submission' })];
    const outcomes = await redditPlatform.sendBatch(inputs, redditContext(fake.url));
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    const [request] = fake.requests;
    expect(request!.problems).toEqual([]);
    expect(request!.path).toBe('/api/v3/pixels/a2_cnvdemopixel/conversion_events');
    expect(request!.headers['user-agent']).toMatch(/^cnv/);
    expect(request!.body.data.test_id).toBeUndefined();
    expect(fake.counted().map((c) => [c.event.type.tracking_type, c.event.metadata.conversion_id])).toEqual([['SIGN_UP', 'a'], ['LEAD', 'b']]);
  });

  it('delivers value, currency and the hashed customer id as the strict fake checks them, and the fake refuses them off the documents', async () => {
    const outcomes = await redditPlatform.sendBatch([redditInput({ value: 29.99, currency: 'EUR', customerId: 'customer12345' })], redditContext(fake.url));
    expect(outcomes[0]?.kind).toBe('delivered');
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(fake.counted()[0]!.event.metadata).toEqual({ conversion_id: 'user_42', value: 29.99, currency: 'EUR' });
    const ctx = redditContext(fake.url);
    const off = await fetch(`${fake.url}/api/v3/pixels/${String(ctx.connection.settings.pixel_id)}/conversion_events`, {
      method: 'POST', headers: { authorization: `Bearer ${ctx.connection.credentials.access_token}`, 'content-type': 'application/json', 'user-agent': 'cnv-test/1.0' },
      body: JSON.stringify({ data: { events: [{ event_at: NOW.getTime(), action_source: 'WEBSITE', type: { tracking_type: 'PAGE_VISIT' }, click_id: '1', metadata: { value: 5, revenue: 1 } }] } }),
    });
    expect(off.status).toBe(400);
    expect(fake.requests[1]!.problems).toEqual(expect.arrayContaining([
      expect.stringContaining('metadata.revenue: unknown field'),
      expect.stringContaining('metadata.value needs a currency'),
      expect.stringContaining('PAGE_VISIT takes no value or currency'),
    ]));
  });

  it('counts a resend of the same conversion once (Reddit deduplicates on conversion_id) and calls it delivered', async () => {
    await redditPlatform.sendBatch([redditInput()], redditContext(fake.url));
    const again = await redditPlatform.sendBatch([redditInput({ eventId: 'evt_again' })], redditContext(fake.url));
    expect(again[0]?.kind).toBe('delivered');
    expect(fake.counted()).toHaveLength(1);
    expect(fake.duplicates()).toBe(1);
  });

  it('waits as long as a 429’s Retry-After says, then delivers', async () => {
    fake.respondWith({ kind: 'rate_limit', retryAfterSeconds: 30 });
    expect((await redditPlatform.sendBatch([redditInput()], redditContext(fake.url)))[0]).toMatchObject({ kind: 'retry', afterMs: 30_000, error: { code: 'rate_limited', status: 429 } });
    expect((await redditPlatform.sendBatch([redditInput()], redditContext(fake.url)))[0]?.kind).toBe('delivered');
  });

  it('hands a refused token to delivery’s token mechanism, and fails a refused pixel with a plain hint', async () => {
    const token = await redditPlatform.sendBatch([redditInput()], redditContext(fake.url, { token: 'eyJ' + 'x'.repeat(40) }));
    expect(token[0]).toMatchObject({ kind: 'token_refused', error: { code: 'invalid_token', status: 401, hint: expect.any(String) } });
    const pixel = await redditPlatform.sendBatch([redditInput()], redditContext(fake.url, { pixelId: 'a2_someoneelse' }));
    expect(pixel[0]).toMatchObject({ kind: 'failed', error: { code: 'permission_denied', status: 403 } });
  });

  it('isolates the one event Reddit refuses (a too-long custom name the fake checks), delivering the others', async () => {
    // cnv's own check refuses such a name at publish; an action config from before that check stands for it here.
    const inputs = ['u1', 'u2', 'u3'].map((id) => redditInput({ eventId: `evt_${id}`, customerEventId: id }));
    inputs[1] = { ...inputs[1]!, actionConfig: { event_name: 'x'.repeat(70) } };
    const outcomes = await redditPlatform.sendBatch(inputs, redditContext(fake.url));
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'failed', 'delivered']);
    expect(outcomes[1]).toMatchObject({ error: { code: 'invalid_event', status: 400, message: expect.stringContaining('None were processed') } });
    expect(fake.counted().map((c) => c.event.metadata.conversion_id)).toEqual(['u1', 'u3']);
  });

  it('retries a 500 and a request Reddit never answers', async () => {
    fake.respondWith('server_error');
    expect((await redditPlatform.sendBatch([redditInput()], redditContext(fake.url)))[0]).toMatchObject({ kind: 'retry', error: { status: 500 } });
    fake.respondWith('hang');
    expect((await redditPlatform.sendBatch([redditInput()], redditContext(fake.url, { timeoutMs: 200 })))[0]).toMatchObject({ kind: 'retry', error: { code: 'timeout' } });
  });
});

describe('testing a Reddit connection', () => {
  it('sends one custom test event to Event Testing with the connection’s test id', async () => {
    const result = await redditPlatform.testConnection(redditContext(fake.url, { testId: 't2_eventtest' }));
    expect(result).toMatchObject({ ok: true, message: expect.stringContaining('Event Testing') });
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(fake.counted()).toEqual([expect.objectContaining({ testId: 't2_eventtest', event: expect.objectContaining({ type: { tracking_type: 'CUSTOM', custom_event_name: 'CnvConnectionTest' } }) })]);
  });

  it('says what Reddit refused', async () => {
    expect(await redditPlatform.testConnection(redditContext(fake.url, { token: 'eyJ' + 'y'.repeat(40) }))).toMatchObject({ ok: false, error: { code: 'invalid_token' } });
  });
});
