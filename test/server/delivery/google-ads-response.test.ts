import { describe, expect, it } from 'vitest';
import { interpretUploadResponse } from '../../../src/server/destinations/google-ads/legacy-response';

const now = new Date('2026-11-21T10:00:00Z');
const summary = { order_id: 'abc' };
const text = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));
/** The outcome of the one conversion of an upload. */
const read = (status: number, body: unknown, retryAfter: string | null = null) =>
  interpretUploadResponse(status, retryAfter, text(body), [summary], now)[0]!;

function failure(errorCode: Record<string, string>, message: string, index = 0) {
  return {
    partialFailureError: {
      code: 3,
      message: `${message}, at conversions[${index}]`,
      details: [
        {
          '@type': 'type.googleapis.com/google.ads.googleads.v22.errors.GoogleAdsFailure',
          errors: [{ errorCode, message, location: { fieldPathElements: [{ fieldName: 'conversions', index }, { fieldName: 'gclid' }] } }],
        },
      ],
    },
    results: [{}],
  };
}

describe("reading Google Ads' answer to an upload", () => {
  it('is delivered on 200 without a partial failure, keeping the job id', () => {
    expect(read(200, { results: [{ gclid: 'x' }], jobId: '42' })).toEqual({ kind: 'delivered', request: { order_id: 'abc', job_id: '42' } });
  });

  it("fails permanently on a row error, with Google's code and message", () => {
    expect(read(200, failure({ conversionUploadError: 'UNPARSEABLE_GCLID' }, 'The imported gclid could not be decoded.'))).toMatchObject({
      kind: 'failed',
      error: { code: 'UNPARSEABLE_GCLID', message: 'The imported gclid could not be decoded.' },
    });
  });

  it('gives each conversion of a batch its own outcome, by row index', () => {
    const summaries = [0, 1, 2, 3].map((i) => ({ order_id: `o${i}` }));
    const outcomes = interpretUploadResponse(200, null, text(failure({ conversionUploadError: 'UNPARSEABLE_GCLID' }, 'bad', 2)), summaries, now);
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered', 'failed', 'delivered']);
    const unavailable = interpretUploadResponse(503, null, '{}', summaries, now);
    expect(unavailable.map((o) => o.kind)).toEqual(['retry', 'retry', 'retry', 'retry']);
  });

  it('counts a resend that Google already holds (same order id) as delivered', () => {
    expect(read(200, failure({ conversionUploadError: 'ORDER_ID_ALREADY_IN_USE' }, 'The order id was already used.'))).toMatchObject({
      kind: 'delivered',
      request: { deduplicated: 'ORDER_ID_ALREADY_IN_USE' },
    });
  });

  it('retries in 6 hours when Google says the conversion action is too recent', () => {
    expect(read(200, failure({ conversionUploadError: 'TOO_RECENT_CONVERSION_ACTION' }, 'too recent'))).toMatchObject({ kind: 'retry', afterMs: 6 * 3600_000 });
  });

  it('retries a 429, honouring Retry-After, else the RetryInfo delay', () => {
    const body = { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too many requests', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' }] } };
    expect(read(429, body, '30')).toMatchObject({ kind: 'retry', afterMs: 30_000, error: { code: 'RESOURCE_EXHAUSTED', status: 429 } });
    expect(read(429, body)).toMatchObject({ kind: 'retry', afterMs: 12_000 });
  });

  it('retries 5xx and a 2xx whose body is not JSON, leaving the delay to the backoff', () => {
    const outcome = read(503, { error: { code: 503, status: 'UNAVAILABLE', message: 'The service is unavailable.' } });
    expect(outcome).toMatchObject({ kind: 'retry', error: { code: 'UNAVAILABLE', status: 503 } });
    expect(outcome).not.toHaveProperty('afterMs');
    expect(read(502, '<html>bad gateway</html>')).toMatchObject({ kind: 'retry', error: { code: 'http_502' } });
    expect(read(200, 'not json')).toMatchObject({ kind: 'retry', error: { code: 'invalid_response' } });
  });

  it.each([
    ['CUSTOMER_NOT_ALLOWLISTED_FOR_THIS_FEATURE', /Data Manager API/],
    ['CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION', /Explorer access/],
    ['ACTION_NOT_PERMITTED', /Explorer access/],
  ])('fails %s with a hint that says what to do', (code, hint) => {
    const body = {
      error: {
        code: 403, status: 'PERMISSION_DENIED', message: 'The caller does not have permission',
        details: [{ '@type': 'type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure', errors: [{ errorCode: { authorizationError: code }, message: 'Not allowed.' }] }],
      },
    };
    expect(read(403, body)).toMatchObject({ kind: 'failed', error: { code, status: 403, hint: expect.stringMatching(hint) } });
    expect(read(200, failure({ authorizationError: code }, 'Not allowed.'))).toMatchObject({ kind: 'failed', error: { code, hint: expect.stringMatching(hint) } });
  });

  it("reports a refused token on a 401 (delivery refreshes once) and fails other 4xx with the GoogleAdsFailure's code and message", () => {
    const body = {
      error: {
        code: 401, status: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials.',
        details: [{ '@type': 'type.googleapis.com/google.ads.googleads.v22.errors.GoogleAdsFailure', errors: [{ errorCode: { authenticationError: 'OAUTH_TOKEN_EXPIRED' }, message: 'The OAuth token has expired.' }] }],
      },
    };
    expect(read(401, body)).toEqual({ kind: 'token_refused', error: { code: 'OAUTH_TOKEN_EXPIRED', message: 'The OAuth token has expired.', status: 401 }, request: summary });
    expect(read(400, { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' } })).toMatchObject({
      kind: 'failed', error: { code: 'INVALID_ARGUMENT', status: 400 },
    });
  });
});
