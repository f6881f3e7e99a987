import { describe, expect, it } from 'vitest';
import { callFault, interpretApplyAnswer } from '../../../../src/server/destinations/microsoft-ads/response';
import { NOW } from './fixtures';

const rows = [{ row: 0 }, { row: 1 }, { row: 2 }];
const answer = (status: number, body: unknown, retryAfter: string | null = null) =>
  interpretApplyAnswer({ status, retryAfter, text: typeof body === 'string' ? body : JSON.stringify(body) }, rows, NOW.getTime());
const batchError = (Index: number, Code: number, ErrorCode: string) => ({ Code, Details: null, ErrorCode, FieldPath: null, ForwardCompatibilityMap: null, Index, Message: 'm', Type: 'BatchError' });
const adApiFault = (Code: number, ErrorCode: string) => ({ TrackingId: 't-1', Type: 'AdApiFaultDetail', Errors: [{ Code, Detail: null, ErrorCode, Message: 'secret-looking text' }] });

describe("reading Microsoft Advertising's answer to ApplyOfflineConversions", () => {
  it('delivers every row of a 200 with no partial errors, keeping the tracking id', () => {
    const outcomes = answer(200, { PartialErrors: [] });
    expect(outcomes).toHaveLength(3);
    expect(outcomes[0]).toEqual({ kind: 'delivered', request: { row: 0 } });
    expect(answer(200, { TrackingId: 'abc', PartialErrors: null })[1]).toEqual({ kind: 'delivered', request: { row: 1, tracking_id: 'abc' }, platformRequestId: 'abc' });
  });

  it('gives each partial error to the row its Index names and delivers the others', () => {
    const outcomes = answer(200, { PartialErrors: [batchError(1, 5604, 'OfflineConversionMicrosoftClickIdInvalid')] });
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'failed', 'delivered']);
    expect(outcomes[1]).toMatchObject({ kind: 'failed', error: { code: 'click_id_invalid', status: 200, hint: expect.any(String) }, request: { row: 1 } });
  });

  it('waits and retries when the goal was created less than two hours ago', () => {
    const [outcome] = answer(200, { PartialErrors: [batchError(0, 5615, 'OfflineConversionNotAcceptedForGoal')] });
    expect(outcome).toMatchObject({ kind: 'retry_later', afterMs: 30 * 60_000, error: { code: 'conversion_goal_not_ready' } });
  });

  it('fails a conversion whose name matches no goal, with a hint about the exact name', () => {
    const [outcome] = answer(200, { PartialErrors: [batchError(0, 5606, 'OfflineConversionNameInvalid')] });
    expect(outcome).toMatchObject({ kind: 'failed', error: { code: 'conversion_goal_not_found', hint: expect.stringMatching(/exactly/) } });
  });

  it('reads an error that names only its symbolic code', () => {
    const [outcome] = answer(200, { PartialErrors: [{ ErrorCode: 'ConversionTimeEarlierThanClickTime', Index: 0 }] });
    expect(outcome).toMatchObject({ kind: 'failed', error: { code: 'conversion_before_click' } });
  });

  it('names an unknown code without copying Microsoft\'s message', () => {
    const [outcome] = answer(200, { PartialErrors: [{ ...batchError(0, 9999, 'SomethingNew'), Message: 'john@contoso.com is wrong' }] });
    expect(outcome).toMatchObject({ kind: 'failed', error: { code: 'platform_rejected' } });
    expect(JSON.stringify(outcome)).not.toContain('john@contoso.com');
  });

  it('retries the whole batch after 60 seconds on CallRateExceeded, or after Retry-After when given', () => {
    expect(answer(429, adApiFault(117, 'CallRateExceeded'))[2]).toMatchObject({ kind: 'retry', afterMs: 60_000, error: { code: 'rate_limited', status: 429 } });
    expect(answer(429, '', '7')[0]).toMatchObject({ kind: 'retry', afterMs: 7000 });
  });

  it('retries on an internal error and on a bare 5xx', () => {
    expect(answer(500, adApiFault(0, 'InternalError'))[0]).toMatchObject({ kind: 'retry', error: { code: 'platform_error', status: 500 } });
    expect(answer(503, '<html>unavailable</html>')[0]).toMatchObject({ kind: 'retry', error: { status: 503 } });
  });

  it('reports refused credentials as a refused token (delivery refreshes once) and fails a user without access', () => {
    expect(answer(401, adApiFault(105, 'InvalidCredentials'))[0]).toMatchObject({ kind: 'token_refused', error: { code: 'invalid_credentials' }, request: { row: 0, tracking_id: 't-1' } });
    expect(answer(403, adApiFault(106, 'UserIsNotAuthorized'))[0]).toMatchObject({ kind: 'failed', error: { code: 'not_authorized' } });
  });

  it('reports an expired access token as refused (delivery refreshes once and sends again)', () => {
    expect(answer(401, adApiFault(109, 'AuthenticationTokenExpired'))[0]).toMatchObject({ kind: 'token_refused', error: { code: 'token_expired' } });
  });

  it('reads a fault wrapped in ApplicationFault', () => {
    expect(answer(400, { ApplicationFault: adApiFault(117, 'CallRateExceeded') })[0]).toMatchObject({ kind: 'retry', error: { code: 'rate_limited' } });
  });

  it('fails the rows a fault names by index and lets the others go again', () => {
    const outcomes = answer(400, { TrackingId: 't', Type: 'ApiFaultDetail', BatchErrors: [batchError(2, 5610, 'OfflineConversionValueInvalid')], OperationErrors: [] });
    expect(outcomes.map((o) => [o.kind, 'error' in o ? o.error.code : null])).toEqual([
      ['retry', 'batch_refused'],
      ['retry', 'batch_refused'],
      ['failed', 'invalid_value'],
    ]);
  });

  it("says where a refused value or currency came from: the report's own (which wins) or the flow action's fixed one", () => {
    const [value] = answer(200, { PartialErrors: [batchError(0, 5610, 'OfflineConversionValueInvalid')] });
    const [currency] = answer(200, { PartialErrors: [batchError(0, 5611, 'OfflineConversionCurrencyCodeInvalid')] });
    expect(value).toMatchObject({ kind: 'failed', error: { code: 'invalid_value', hint: expect.stringMatching(/value the report carried .*or the flow action's fixed value/) } });
    expect(currency).toMatchObject({ kind: 'failed', error: { code: 'invalid_currency', hint: expect.stringMatching(/currency the report carried .*Microsoft Advertising's list of currencies.*the flow action's currency/) } });
  });

  it('resends when a 200 is not the documented JSON', () => {
    expect(answer(200, 'not json')[0]).toMatchObject({ kind: 'retry', error: { code: 'unreadable_answer' } });
  });

  it('describes a failed connection test by the fault it got', () => {
    expect(callFault(200, '{}')).toBeNull();
    expect(callFault(403, JSON.stringify(adApiFault(106, 'UserIsNotAuthorized')))).toMatchObject({ code: 'not_authorized', status: 403, hint: expect.any(String) });
  });
});
