import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acceptedEvents, startFakeMeta, type MetaPlan } from '../../../../src/demo/fakes/meta';
import type { FakeServer } from '../../../../src/demo/fakes/fake-server';
import { metaPlatform } from '../../../../src/server/destinations/meta';
import { NOW, metaContext, metaInput } from './fixtures';

let fake: FakeServer<MetaPlan>;

beforeAll(async () => {
  fake = await startFakeMeta({ now: () => NOW });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const three = () => [
  metaInput({ eventId: 'evt_a', customerEventId: 'user_a' }),
  metaInput({ eventId: 'evt_b', customerEventId: 'user_b', trigger: 'form_submission' }),
  metaInput({ eventId: 'evt_c', customerEventId: null, identity: { email: 'c@example.org' } }),
];

describe('sending a batch to Meta', () => {
  it('delivers every event of a batch in one request the strict fake accepts', async () => {
    const outcomes = await metaPlatform.sendBatch(three(), metaContext(fake.url));
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.problems).toEqual([]);
    expect(fake.requests[0]?.path).toBe('/v24.0/1234567890123456/events');
    expect(fake.requests[0]?.query.get('access_token')).toBeNull();
    expect(fake.requests[0]?.body.test_event_code).toBeUndefined();
    expect(acceptedEvents(fake).map((e) => e.event_id)).toEqual(['user_a', 'user_b', 'evt_c']);
    const first = outcomes[0];
    expect(first?.kind === 'delivered' && first.platformRequestId).toMatch(/^Afake/);
  });

  it('fails a too-old conversion before sending and delivers the rest', async () => {
    const inputs = [metaInput({ occurredAt: new Date(NOW.getTime() - 8 * 86_400_000) }), metaInput({ eventId: 'evt_ok' })];
    const outcomes = await metaPlatform.sendBatch(inputs, metaContext(fake.url));
    expect(outcomes[0]).toMatchObject({ kind: 'failed', error: { code: 'event_too_old' } });
    expect(outcomes[1]?.kind).toBe('delivered');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.body.data).toHaveLength(1);
  });

  it('isolates an event Meta refuses by halving the batch, so the others are delivered', async () => {
    // A rule of Meta's cnv cannot check itself (here: the fake refuses event_id "bad"): Meta refuses the whole request.
    const strict = await startFakeMeta({ now: () => NOW, refuseEvent: (e) => (e.event_id === 'bad' ? 'refused by Meta' : null) });
    try {
      const inputs = ['u1', 'bad', 'u3', 'u4'].map((id) => metaInput({ eventId: `evt_${id}`, customerEventId: id }));
      const outcomes = await metaPlatform.sendBatch(inputs, metaContext(strict.url));
      expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'failed', 'delivered', 'delivered']);
      expect(outcomes[1]).toMatchObject({ kind: 'failed', error: { code: 'invalid_parameter', status: 400 } });
      // 4 refused → [u1,bad] refused → [u1] ok, [bad] refused → [u3,u4] ok.
      expect(strict.requests.map((r) => r.body.data.length)).toEqual([4, 2, 1, 1, 2]);
      expect(acceptedEvents(strict).map((e) => e.event_id)).toEqual(['u1', 'u3', 'u4']);
    } finally {
      await strict.close();
    }
  });

  it('sends a conversion reported a few minutes ahead of the clock (skew the webhook allows) at the sending time, not in the future', async () => {
    const ahead = metaInput({ occurredAt: new Date(NOW.getTime() + 4 * 60_000) });
    const [outcome] = await metaPlatform.sendBatch([ahead], metaContext(fake.url));
    expect(fake.requests[0]?.problems).toEqual([]);
    expect(outcome?.kind).toBe('delivered');
    expect(fake.requests[0]?.body.data[0].event_time).toBe(Math.floor(NOW.getTime() / 1000));
  });

  it('keeps isolating refused events within a budget of calls, and retries the rest later, rather than send hundreds of requests', async () => {
    // Every event breaks a rule of Meta's (one cnv cannot check): each split is refused again.
    const strict = await startFakeMeta({ now: () => NOW, refuseEvent: () => 'refused by Meta' });
    try {
      const inputs = Array.from({ length: 200 }, (_, i) => metaInput({ eventId: `evt_${i}`, customerEventId: `u${i}` }));
      const outcomes = await metaPlatform.sendBatch(inputs, metaContext(strict.url));
      // Halving 200 events down to each one alone takes 399 requests; the budget keeps it near 64.
      expect(strict.requests.length).toBeLessThan(100);
      expect(outcomes.some((o) => o.kind === 'retry' && o.error.code === 'isolation_pending')).toBe(true);
      expect(outcomes.every((o) => o.kind === 'retry' || (o.kind === 'failed' && o.error.code === 'invalid_parameter'))).toBe(true);
    } finally {
      await strict.close();
    }
  });

  it('leaves out an IP address that is not one, rather than have Meta refuse the batch', async () => {
    const outcomes = await metaPlatform.sendBatch([metaInput({ ipAddress: 'not-an-ip' })], metaContext(fake.url));
    expect(outcomes[0]?.kind).toBe('delivered');
    expect(fake.requests[0]?.body.data[0].user_data.client_ip_address).toBeUndefined();
  });

  it('retries every event when Meta answers 500', async () => {
    fake.respondWith('server_error');
    const outcomes = await metaPlatform.sendBatch(three(), metaContext(fake.url));
    expect(outcomes.every((o) => o.kind === 'retry' && o.error.code === 'meta_unavailable' && o.error.status === 500)).toBe(true);
  });

  it('retries every event, without splitting, when Meta has temporarily blocked the account (code 368)', async () => {
    fake.respondWith('temporarily_blocked');
    const outcomes = await metaPlatform.sendBatch(three(), metaContext(fake.url));
    expect(outcomes.every((o) => o.kind === 'retry' && o.error.code === 'meta_unavailable')).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a rate limit after the wait Meta names', async () => {
    fake.respondWith('rate_limit');
    const [outcome] = await metaPlatform.sendBatch([metaInput()], metaContext(fake.url));
    expect(outcome).toMatchObject({ kind: 'retry', error: { code: 'rate_limited' }, afterMs: 180_000 });
  });

  it('reports every event of a request whose token Meta refused, with a plain hint, without splitting', async () => {
    const outcomes = await metaPlatform.sendBatch(three(), metaContext(fake.url, { token: 'EAAwrong00000000000000000' }));
    expect(outcomes.every((o) => o.kind === 'token_refused' && o.error.code === 'invalid_token' && !!o.error.hint)).toBe(true);
    expect(fake.requests).toHaveLength(1);
    expect(JSON.stringify(outcomes)).not.toContain('EAAwrong');
  });

  it('fails with a hint when the dataset is unknown to the token', async () => {
    const [outcome] = await metaPlatform.sendBatch([metaInput()], metaContext(fake.url, { pixelId: '999999999' }));
    expect(outcome).toMatchObject({ kind: 'failed', error: { code: 'dataset_not_found' } });
  });

  it('retries when Meta does not answer in time', async () => {
    fake.respondWith('hang');
    const [outcome] = await metaPlatform.sendBatch([metaInput()], metaContext(fake.url, { timeoutMs: 200 }));
    expect(outcome).toMatchObject({ kind: 'retry', error: { code: 'timeout' } });
  });

  it('stores a summary without the IP address, the user agent or raw identity', async () => {
    const [outcome] = await metaPlatform.sendBatch([metaInput()], metaContext(fake.url));
    const text = JSON.stringify(outcome);
    for (const secret of ['203.0.113.7', 'Mozilla', 'Ada@Example.com', 'ada@example.com', 'Lovelace', 'EAAfake']) expect(text).not.toContain(secret);
  });
});

describe('testing a Meta connection', () => {
  it('sends one synthetic event with the test event code and reports what Meta said', async () => {
    const result = await metaPlatform.testConnection(metaContext(fake.url));
    expect(result.ok).toBe(true);
    expect(result.message).toMatch(/events_received: 1, test event code TEST_CNV/);
    const request = fake.requests[0];
    expect(request?.problems).toEqual([]);
    expect(request?.body.test_event_code).toBe('TEST_CNV');
    expect(request?.body.data).toHaveLength(1);
    expect(request?.body.data[0].event_name).toBe('CnvConnectionTest');
  });

  it('uses the test event code given on the connect page', async () => {
    await metaPlatform.testConnection(metaContext(fake.url, { testEventCode: 'TEST4242' }));
    expect(fake.requests[0]?.body.test_event_code).toBe('TEST4242');
  });

  it('reports a refused token as not ok, with the hint', async () => {
    const result = await metaPlatform.testConnection(metaContext(fake.url, { token: 'EAAwrong00000000000000000' }));
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('invalid_token');
    expect(result.message).not.toContain('EAAwrong');
    // A pasted token nothing can refresh: the test says the connection's credential is refused (it is then marked).
    expect(result.credentialRefused).toBe(true);
  });
});
