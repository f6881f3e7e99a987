import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeGoogle, type FakeGoogle } from '../../../../src/demo/fakes/google';
import { sendDataManagerBatch, testDataManagerConnection } from '../../../../src/server/destinations/google-ads/data-manager-send';
import { readRequestStatus, retrieveRequestStatus } from '../../../../src/server/destinations/google-ads/diagnostics';
import { input, sendContext } from './inputs';

let google: FakeGoogle;
const ingestRequests = () => google.server.requests.filter((r) => r.path === '/v1/events:ingest');

beforeAll(async () => {
  google = await startFakeGoogle({ now: new Date('2026-11-21T10:00:00Z') });
});
afterAll(() => google.close());
beforeEach(() => google.server.reset());

function ctx(settings?: Record<string, unknown>) {
  const { accessToken } = google.issueAccessToken();
  return sendContext(google.urls.apiBase, async () => accessToken, settings);
}

const batch = (n: number) => Array.from({ length: n }, (_, i) => input({ eventId: `evt_${i}`, eventActionId: `eva_${i}` }));

describe('sending a batch through the Data Manager API', () => {
  it('delivers every event in one request and keeps Google request id', async () => {
    const outcomes = await sendDataManagerBatch(batch(3), ctx());
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    const requestId = outcomes[0]!.kind === 'delivered' ? outcomes[0]!.platformRequestId : undefined;
    expect(requestId).toMatch(/[0-9a-f-]{36}/);
    expect(ingestRequests()).toHaveLength(1);
    expect(ingestRequests()[0]!.problems).toEqual([]);
    expect(ingestRequests()[0]!.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
  });

  it('fails the event Google names and resends the others, so one bad event holds back none', async () => {
    google.server.respondWith({ kind: 'eventError', index: 1, reason: 'INVALID_FORMAT', field: 'adIdentifiers.gclid' });
    const outcomes = await sendDataManagerBatch(batch(4), ctx());
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'failed', 'delivered', 'delivered']);
    expect(outcomes[1]!.kind === 'failed' && outcomes[1]!.error.code).toBe('invalid_format');
    expect(ingestRequests().map((r) => r.body.events.length)).toEqual([4, 3]);
  });

  it('halves a rejected batch that names no event until the bad one is alone', async () => {
    // 4 events: the first request and the first half fail unattributed, then the lone events go through or fail.
    google.server.respondWith({ kind: 'unattributedError' }, { kind: 'unattributedError' }, { kind: 'unattributedError' });
    const outcomes = await sendDataManagerBatch(batch(4), ctx());
    expect(outcomes.map((o) => o.kind)).toEqual(['failed', 'delivered', 'delivered', 'delivered']);
    expect(ingestRequests().map((r) => r.body.events.length)).toEqual([4, 2, 1, 1, 2]);
  });

  it('retries every event after the wait Google asked for when rate limited', async () => {
    google.server.respondWith({ kind: 'rateLimited', retryAfterSeconds: 7 });
    const outcomes = await sendDataManagerBatch(batch(2), ctx());
    expect(outcomes).toMatchObject([{ kind: 'retry', afterMs: 7000 }, { kind: 'retry', afterMs: 7000 }]);
  });

  it('retries on a server error and on a timeout', async () => {
    google.server.respondWith({ kind: 'serverError' });
    expect((await sendDataManagerBatch(batch(1), ctx()))[0]).toMatchObject({ kind: 'retry', error: { status: 500 } });
    google.server.respondWith({ kind: 'hang' });
    const hung = await sendDataManagerBatch(batch(1), { ...ctx(), timeoutMs: 200 });
    expect(hung[0]).toMatchObject({ kind: 'retry', error: { code: 'timeout' } });
  });

  it('fails every event with a hint when the account has not accepted the terms', async () => {
    google.server.respondWith({ kind: 'requestError', status: 400, grpcStatus: 'INVALID_ARGUMENT', reason: 'TERMS_AND_CONDITIONS_NOT_SIGNED' });
    const outcomes = await sendDataManagerBatch(batch(2), ctx());
    expect(outcomes).toMatchObject([{ kind: 'failed', error: { code: 'customer_data_terms_not_accepted' } }, { kind: 'failed' }]);
  });

  it('fails unmatched events locally and sends the rest', async () => {
    const inputs = [input({ clickIds: {}, identity: {} }), input({ eventActionId: 'eva_ok' })];
    const outcomes = await sendDataManagerBatch(inputs, ctx());
    expect(outcomes.map((o) => o.kind)).toEqual(['failed', 'delivered']);
    expect(ingestRequests()[0]!.body.events).toHaveLength(1);
  });

  it('fails the whole batch when the connection has no customer id', async () => {
    const outcomes = await sendDataManagerBatch(batch(2), ctx({}));
    expect(outcomes).toMatchObject([{ kind: 'failed', error: { code: 'destination_misconfigured' } }, { kind: 'failed' }]);
    expect(ingestRequests()).toHaveLength(0);
  });
});

describe('testing a connection and reading diagnostics', () => {
  it('checks a connection with a validate-only request that records nothing', async () => {
    const before = google.ingested().length;
    const result = await testDataManagerConnection(ctx(), '555');
    expect(result.ok).toBe(true);
    expect(ingestRequests()[0]!.body.validateOnly).toBe(true);
    expect(google.ingested().length).toBe(before);
  });

  it("takes the conversion action as a flow's action does: its number or its resource name; anything else is asked for", async () => {
    const byName = await testDataManagerConnection(ctx(), 'customers/1234567890/conversionActions/555');
    expect(byName.ok).toBe(true);
    const sent = ingestRequests().at(-1)!.body as { destinations: Array<{ productDestinationId: string }> };
    expect(sent.destinations[0]!.productDestinationId).toBe('555');
    const missing = await testDataManagerConnection(ctx(), 'conversions/555');
    expect(missing).toMatchObject({ ok: false, error: { code: 'conversion_action_missing', hint: expect.stringContaining('resource name') } });
  });

  it('reports an account problem found by the validate-only request', async () => {
    google.server.respondWith({ kind: 'requestError', status: 403, grpcStatus: 'PERMISSION_DENIED', reason: 'PERMISSION_DENIED' });
    const result = await testDataManagerConnection(ctx(), '555');
    expect(result).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });

  it('shows a resend as a duplicate in the diagnostics of the second upload', async () => {
    const one = [input({ eventActionId: 'eva_dup' })];
    await sendDataManagerBatch(one, ctx());
    const second = await sendDataManagerBatch(one, ctx());
    const requestId = second[0]!.kind === 'delivered' ? second[0]!.platformRequestId! : '';
    const status = await retrieveRequestStatus(requestId, ctx());
    expect(status).toMatchObject({ ok: true, summary: { state: 'partial_success', errors: [{ reason: 'PROCESSING_ERROR_REASON_DUPLICATE_TRANSACTION_ID', count: 1 }] } });
  });

  it('summarises a request status in one sentence', () => {
    const summary = readRequestStatus({
      requestStatusPerDestination: [
        { requestStatus: 'PARTIAL_SUCCESS', eventsIngestionStatus: { recordCount: '3' }, errorInfo: { errorCounts: [{ recordCount: '1', reason: 'PROCESSING_ERROR_REASON_EVENT_TOO_OLD' }] } },
      ],
    });
    expect(summary.message).toMatch(/1 the conversion came after/);
    expect(readRequestStatus({ requestStatusPerDestination: [{ requestStatus: 'PROCESSING' }] }).state).toBe('processing');
  });
});
