import { describe, expect, it } from 'vitest';
import type { HttpAnswer } from '../../../../src/server/destinations/http';
import { classifyMetaAnswer, metaWaitMs } from '../../../../src/server/destinations/meta/response';

const NOW_MS = Date.parse('2026-11-21T10:00:00Z');

function answer(status: number, json: unknown, headers: Record<string, string> = {}): HttpAnswer {
  return { answered: true, status, headers: new Headers(headers), text: JSON.stringify(json) };
}
function graphError(status: number, error: Record<string, unknown>, headers: Record<string, string> = {}): HttpAnswer {
  return answer(status, { error: { message: 'x', type: 'OAuthException', fbtrace_id: 'Atrace', ...error } }, headers);
}

describe("classifying Meta's answer", () => {
  it('is delivered when events_received counts every event sent, with fbtrace_id as the request id', () => {
    expect(classifyMetaAnswer(answer(200, { events_received: 3, messages: [], fbtrace_id: 'Abc' }), 3, NOW_MS)).toEqual({
      kind: 'delivered',
      eventsReceived: 3,
      fbtraceId: 'Abc',
    });
  });

  it('retries when Meta counts fewer events than were sent', () => {
    const verdict = classifyMetaAnswer(answer(200, { events_received: 1 }), 2, NOW_MS);
    expect(verdict).toMatchObject({ kind: 'retry', error: { code: 'unexpected_answer' } });
  });

  it('retries a 5xx and an answer marked is_transient', () => {
    expect(classifyMetaAnswer(graphError(500, { code: 2, is_transient: true }), 1, NOW_MS)).toMatchObject({
      kind: 'retry',
      error: { code: 'meta_unavailable', status: 500 },
    });
    expect(classifyMetaAnswer(graphError(400, { code: 1, is_transient: true }), 1, NOW_MS).kind).toBe('retry');
  });

  it.each([4, 17, 32, 341, 613, 80004, 80000])('retries rate limit code %i as rate_limited', (code) => {
    expect(classifyMetaAnswer(graphError(400, { code }), 1, NOW_MS)).toMatchObject({ kind: 'retry', error: { code: 'rate_limited' } });
  });

  it("waits as long as Meta's Business Use Case header says (minutes), or a Retry-After", () => {
    const usage = JSON.stringify({ '123': [{ type: 'ads_management', call_count: 100, estimated_time_to_regain_access: 3 }] });
    expect(classifyMetaAnswer(graphError(400, { code: 80004 }, { 'x-business-use-case-usage': usage }), 1, NOW_MS)).toMatchObject({
      kind: 'retry',
      afterMs: 180_000,
    });
    expect(metaWaitMs(new Headers({ 'retry-after': '30' }), NOW_MS)).toBe(30_000);
    expect(metaWaitMs(new Headers({}), NOW_MS)).toBeUndefined();
  });

  it('reports an invalid token as refused (the connection then waits for a new one), with a hint to generate a new one', () => {
    const verdict = classifyMetaAnswer(graphError(400, { code: 190, error_subcode: 463 }), 2, NOW_MS);
    expect(verdict.kind).toBe('token_refused');
    if (verdict.kind === 'token_refused') {
      expect(verdict.error.code).toBe('invalid_token');
      expect(verdict.error.hint).toMatch(/Generate a new Conversions API access token/);
    }
  });

  it('fails a dataset that does not exist or is not allowed (100/33) for good', () => {
    expect(classifyMetaAnswer(graphError(400, { code: 100, error_subcode: 33 }), 1, NOW_MS)).toMatchObject({
      kind: 'failed',
      error: { code: 'dataset_not_found' },
    });
  });

  it('fails a deprecated Graph API version (#2635) for good, without splitting the batch, naming the setting to change', () => {
    const verdict = classifyMetaAnswer(graphError(400, { code: 2635, message: '(#2635) You are calling a deprecated version of the Ads API. Please update to the latest version: v27.0.' }), 5, NOW_MS);
    expect(verdict).toMatchObject({ kind: 'failed', error: { code: 'api_version_deprecated', status: 400, hint: expect.stringContaining('CNV_META_GRAPH_API_VERSION') } });
  });

  it('fails a permission error for good', () => {
    expect(classifyMetaAnswer(graphError(403, { code: 200 }), 1, NOW_MS)).toMatchObject({
      kind: 'failed',
      error: { code: 'permission_denied' },
    });
  });

  it('marks an invalid parameter as the fault of an event, to be isolated', () => {
    const verdict = classifyMetaAnswer(graphError(400, { code: 100, error_subcode: 2804003, error_user_title: 'Event Timestamp Too Old' }), 5, NOW_MS);
    expect(verdict).toMatchObject({ kind: 'invalid_event', error: { code: 'invalid_parameter', status: 400 } });
    if (verdict.kind === 'invalid_event') expect(verdict.error.message).toContain('100/2804003');
  });

  it('retries when Meta never answered', () => {
    const verdict = classifyMetaAnswer({ answered: false, error: { code: 'timeout', message: 'Meta did not answer within 10 ms.' } }, 1, NOW_MS);
    expect(verdict).toMatchObject({ kind: 'retry', error: { code: 'timeout' } });
  });

  it('never repeats a long opaque value (a token) from Meta’s message', () => {
    const token = 'EAAB' + 'x'.repeat(60);
    const verdict = classifyMetaAnswer(graphError(400, { code: 190, message: `Malformed access token ${token}` }), 1, NOW_MS);
    expect(JSON.stringify(verdict)).not.toContain(token);
  });
});
