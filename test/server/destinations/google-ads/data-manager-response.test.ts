import { describe, expect, it } from 'vitest';
import type { HttpAnswer } from '../../../../src/server/destinations/http';
import { classifyIngestAnswer, durationMs, eventIndexOf } from '../../../../src/server/destinations/google-ads/data-manager-response';

const NOW = Date.parse('2026-11-21T10:00:00Z');

function answer(status: number, json: unknown, headers: Record<string, string> = {}): HttpAnswer {
  return { answered: true, status, headers: new Headers(headers), text: JSON.stringify(json) };
}

function googleError(status: number, grpc: string, reason: string, violations: { field: string; description: string; reason?: string }[] = [], extra: unknown[] = []) {
  const details: unknown[] = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'datamanager.googleapis.com' }, ...extra];
  if (violations.length) details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations });
  return answer(status, { error: { code: status, message: 'Request contains an invalid argument.', status: grpc, details } });
}

describe('classifying an ingest answer', () => {
  it('keeps the request id of a success', () => {
    expect(classifyIngestAnswer(answer(200, { requestId: 'req-1' }), NOW)).toEqual({ kind: 'accepted', requestId: 'req-1' });
  });

  it('retries a 5xx, INTERNAL, UNAVAILABLE or DEADLINE_EXCEEDED answer', () => {
    for (const a of [answer(500, {}), googleError(503, 'UNAVAILABLE', 'INTERNAL_ERROR'), googleError(504, 'DEADLINE_EXCEEDED', 'DEADLINE_EXCEEDED')]) {
      const v = classifyIngestAnswer(a, NOW);
      expect(v.kind === 'all' && v.outcome.kind).toBe('retry');
    }
  });

  it('retries a 429 after the Retry-After Google asked for', () => {
    const v = classifyIngestAnswer(answer(429, {}, { 'retry-after': '30' }), NOW);
    expect(v).toMatchObject({ kind: 'all', outcome: { kind: 'retry', afterMs: 30_000, error: { code: 'rate_limited', status: 429 } } });
  });

  it('retries a RESOURCE_EXHAUSTED after the RetryInfo delay when there is no header', () => {
    const v = classifyIngestAnswer(googleError(429, 'RESOURCE_EXHAUSTED', 'RESOURCE_EXHAUSTED', [], [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }]), NOW);
    expect(v).toMatchObject({ kind: 'all', outcome: { kind: 'retry', afterMs: 1500 } });
  });

  it('retries a transport fault', () => {
    const v = classifyIngestAnswer({ answered: false, error: { code: 'timeout', message: 'late' } }, NOW);
    expect(v).toMatchObject({ kind: 'all', outcome: { kind: 'retry', error: { code: 'timeout' } } });
  });

  it.each([
    ['TERMS_AND_CONDITIONS_NOT_SIGNED', 'customer_data_terms_not_accepted'],
    ['DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED', 'customer_data_terms_not_accepted'],
    ['DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS', 'enhanced_conversions_for_leads_disabled'],
    ['INVALID_CONVERSION_ACTION_ID', 'conversion_action_not_found'],
    ['INVALID_CONVERSION_ACTION_TYPE', 'conversion_action_wrong_type'],
  ])('fails every event for good with a hint when the account says %s', (reason, code) => {
    const v = classifyIngestAnswer(googleError(400, 'INVALID_ARGUMENT', reason), NOW);
    expect(v).toMatchObject({ kind: 'all', outcome: { kind: 'failed', error: { code } } });
    expect(v.kind === 'all' && v.outcome.error.hint).toBeTruthy();
  });

  it('fails every event for good when permission is denied', () => {
    const v = classifyIngestAnswer(googleError(403, 'PERMISSION_DENIED', 'PERMISSION_DENIED'), NOW);
    expect(v).toMatchObject({ kind: 'all', outcome: { kind: 'failed', error: { code: 'permission_denied', status: 403 } } });
  });

  it('names the events a fail-fast rejection points at, with the reason of each', () => {
    const v = classifyIngestAnswer(
      googleError(400, 'INVALID_ARGUMENT', 'INVALID_FORMAT', [
        { field: 'events[2].adIdentifiers.gclid', description: 'bad gclid', reason: 'INVALID_FORMAT' },
        { field: 'events[4]', description: 'no identifiers', reason: 'NO_IDENTIFIERS_PROVIDED' },
      ]),
      NOW,
    );
    expect(v.kind).toBe('events');
    if (v.kind !== 'events') return;
    expect([...v.failed.keys()]).toEqual([2, 4]);
    expect(v.failed.get(2)).toMatchObject({ code: 'invalid_format' });
    expect(v.failed.get(4)).toMatchObject({ code: 'no_identifiers' });
  });

  it('asks for a split when an invalid request names no event', () => {
    expect(classifyIngestAnswer(googleError(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT'), NOW).kind).toBe('unattributed');
  });

  it('reads event indexes and durations the way Google writes them', () => {
    expect(eventIndexOf('events[12].userData')).toBe(12);
    expect(eventIndexOf('events.3')).toBe(3);
    expect(eventIndexOf('destinations[0]')).toBeNull();
    expect(durationMs('30s')).toBe(30_000);
    expect(durationMs('soon')).toBeNull();
  });
});
