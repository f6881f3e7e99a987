import { describe, expect, it } from 'vitest';
import { readElementResults, readErrorBody, verdictOf } from '../../../../src/server/destinations/linkedin/response';

const NOW_MS = Date.parse('2026-11-20T12:00:00Z');

describe('LinkedIn answer classification', () => {
  it('delivers a 201 element and counts a 409 element as already delivered', () => {
    expect(verdictOf(201, null, null, null, NOW_MS)).toEqual({ kind: 'delivered', duplicate: false });
    expect(verdictOf(409, null, null, null, NOW_MS)).toEqual({ kind: 'delivered', duplicate: true });
  });

  it('retries a 429 after the Retry-After LinkedIn sent, and without one when it sent none', () => {
    const withHeader = verdictOf(429, null, 'Too many requests', '30', NOW_MS);
    expect(withHeader).toMatchObject({ kind: 'retry', afterMs: 30_000, error: { code: 'rate_limited', status: 429 } });
    expect(verdictOf(429, null, null, null, NOW_MS)).not.toHaveProperty('afterMs');
  });

  it('retries a 5xx with backoff', () => {
    expect(verdictOf(503, null, null, null, NOW_MS)).toMatchObject({ kind: 'retry', error: { code: 'platform_unavailable', status: 503 } });
  });

  it('reports a 401 as a refused token (delivery refreshes once), with a hint to authorize again', () => {
    const v = verdictOf(401, 'INVALID_ACCESS_TOKEN', 'Invalid access token', null, NOW_MS);
    expect(v).toMatchObject({ kind: 'token_refused', error: { code: 'token_refused', status: 401 } });
    expect(v.kind === 'token_refused' && v.error.hint).toMatch(/connect_destination/);
  });

  it('fails a 403 with a hint about the permission and the ad account role', () => {
    const v = verdictOf(403, null, 'Not enough permissions', null, NOW_MS);
    expect(v.kind === 'failed' && v.error.code).toBe('permission_denied');
    expect(v.kind === 'failed' && v.error.hint).toMatch(/role on the ad account/);
  });

  it('fails a 422 about the conversion rule with a hint to check config.conversion_rule', () => {
    const v = verdictOf(422, null, 'Conversion urn:lla:llaPartnerConversion:1 does not exist', null, NOW_MS);
    expect(v.kind === 'failed' && v.error.code).toBe('invalid_conversion_rule');
    expect(v.kind === 'failed' && v.error.hint).toMatch(/conversion_rule/);
  });

  it('fails a 426 with a hint to move to a supported LinkedIn-Version', () => {
    expect(verdictOf(426, null, null, null, NOW_MS)).toMatchObject({ kind: 'failed', error: { code: 'api_version_sunset' } });
  });

  it('reads one result per element and refuses an answer that does not have one per element', () => {
    const text = JSON.stringify({ elements: [{ status: 201 }, { status: 400, error: { message: 'bad', code: 'X' } }] });
    expect(readElementResults(text, 2)).toEqual([
      { status: 201, code: null, message: null },
      { status: 400, code: 'X', message: 'bad' },
    ]);
    expect(readElementResults(text, 3)).toBeNull();
    expect(readElementResults('not json', 1)).toBeNull();
  });

  it('reads a validation error that quotes an email and a hash without them, keeping the field path', () => {
    const hash = 'e814ff'.padEnd(64, '0a');
    const said = readErrorBody({ status: 400, code: 'INVALID_VALUE', message: `Field /elements/0/user/userIds/0/idValue value ${hash} of member ada.lovelace@example.com is invalid` });
    expect(said).toEqual({ code: 'INVALID_VALUE', message: 'Field /elements/0/user/userIds/0/idValue value [removed] of member [removed] is invalid' });
    expect(readErrorBody({ code: 'not a code: ada@example.com', serviceErrorCode: 100 }).code).toBe('service_error_100');
  });
});
