/**
 * Reading Microsoft Advertising's answers. A 200 carries `PartialErrors`, BatchError objects whose `Index` is the
 * zero-based position of the failed conversion in the request; the others were accepted
 * (https://learn.microsoft.com/en-us/advertising/campaign-management-service/batcherror?view=bingads-13). A failed call
 * carries a fault: `AdApiFaultDetail` (`Errors`) or `ApiFaultDetail` (`BatchErrors`, `OperationErrors`), each error
 * with a numeric `Code` and a symbolic `ErrorCode` (https://learn.microsoft.com/en-us/advertising/guides/operation-error-codes).
 * Microsoft's own message text is never copied into ours: it may echo a submitted value. Its symbolic error code is
 * quoted, cleaned as every platform's words are (platform-text.ts).
 */
import { parseRetryAfterMs } from '../../../protocol/retry-after';
import type { DeliveryError, DeliveryOutcome, RequestSummary } from '../destination';
import { parseJson } from '../http';
import { platformText } from '../platform-text';

/** One error as Microsoft reports it (BatchError, AdApiError or OperationError). */
export interface MicrosoftError {
  code: number | null;
  errorCode: string | null;
  index: number | null;
}

/** What to do about one error code. */
type Verdict =
  | { kind: 'retry'; code: string; message: string; afterMs?: number }
  | { kind: 'retry_later'; code: string; message: string; afterMs: number }
  | { kind: 'failed'; code: string; message: string; hint: string }
  | { kind: 'token_refused'; code: string; message: string };

const MINUTE_MS = 60_000;

/** Our code for UserIsNotAuthorized (106): the signed-in user may not use the connection's customer or account. */
export const NOT_AUTHORIZED = 'not_authorized';

/** Numeric codes and their symbolic names, as operation-error-codes.md lists them (only those this call can meet). */
const VERDICTS: Record<number, (name: string) => Verdict> = {
  0: () => ({ kind: 'retry', code: 'platform_error', message: 'Microsoft Advertising reported an internal error.' }),
  105: () => ({
    kind: 'token_refused',
    code: 'invalid_credentials',
    message: 'Microsoft Advertising refused the credentials (InvalidCredentials).',
  }),
  106: () => ({
    kind: 'failed',
    code: NOT_AUTHORIZED,
    message: 'The signed-in Microsoft Advertising user may not use this account (UserIsNotAuthorized).',
    hint: "Check the customer ID and account ID of the connection, or give the signed-in user a role on that account.",
  }),
  // "AuthenticationTokenExpired: The OAuth access token has expired" / "InvalidCredentials: Authentication failed.
  // Either supplied credentials are invalid or the account is inactive" (operation-error-codes): delivery drops the
  // access token, refreshes once and sends again; refused again, the connection asks for a new authorization.
  109: () => ({ kind: 'token_refused', code: 'token_expired', message: 'Microsoft Advertising refused the access token as expired (AuthenticationTokenExpired).' }),
  116: () => ({
    kind: 'failed',
    code: 'missing_headers',
    message: 'Microsoft Advertising says a required header was missing (RequestMissingHeaders).',
    hint: 'Connect Microsoft Advertising again with the customer ID and account ID, and set the developer token.',
  }),
  // "you can resubmit the request under the limit after waiting 60 seconds" (handle-service-errors-exceptions, Code 117).
  117: () => ({ kind: 'retry', code: 'rate_limited', message: 'Microsoft Advertising limits calls per minute (CallRateExceeded).', afterMs: MINUTE_MS }),
  5600: ownBug,
  5601: ownBug,
  5602: ownBug,
  5603: () => ({
    kind: 'failed',
    code: 'click_id_missing',
    message: 'Microsoft Advertising needs a Microsoft click id for this conversion (OfflineConversionMicrosoftClickIdNullOrEmpty).',
    hint: 'Turn on enhanced conversions for the goal so conversions can match on hashed email or phone, or keep the msclkid of the ad click.',
  }),
  5604: () => ({
    kind: 'failed',
    code: 'click_id_invalid',
    message: 'Microsoft Advertising does not know this click id (OfflineConversionMicrosoftClickIdInvalid).',
    hint: 'A conversion must go to the account whose ad was clicked; check the account ID of the connection and that auto-tagging of the Microsoft Click ID is on.',
  }),
  5605: goalNotFound,
  5606: goalNotFound,
  5607: () => ({ kind: 'failed', code: 'invalid_conversion_time', message: 'Microsoft Advertising refused the conversion time (OfflineConversionTimeInvalid).', hint: 'Check the occurred_at of the report.' }),
  5608: ownBug,
  5609: () => ({
    kind: 'failed',
    code: 'conversion_too_old',
    message: 'The conversion time is outside the window Microsoft accepts (OfflineConversionTimeOutOfWindow).',
    hint: 'Conversions must reach Microsoft within 90 days of happening.',
  }),
  // The report's value and currency win over the flow action's fixed ones (request.ts), so the hint names both.
  5610: () => ({
    kind: 'failed',
    code: 'invalid_value',
    message: 'Microsoft Advertising refused the conversion value (OfflineConversionValueInvalid).',
    hint: "Check the value the report carried (a number of 0 or more, in the currency's major unit), or the flow action's fixed value when the report carried none.",
  }),
  5611: () => ({
    kind: 'failed',
    code: 'invalid_currency',
    message: 'Microsoft Advertising refused the currency code (OfflineConversionCurrencyCodeInvalid).',
    // "ConversionCurrencyCode … For more information, see Currencies" (OfflineConversion, bingads-13): Microsoft takes
    // the codes of its "Conversion Goal Revenue Currencies" table (learn.microsoft.com/advertising/guides/currencies),
    // about a hundred, fewer than ISO 4217's (no TRY, for one: the table has the withdrawn TRL).
    hint: "The currency the report carried (it wins over the flow action's) must be one of Microsoft Advertising's list of currencies for conversion goals (learn.microsoft.com/advertising/guides/currencies#conversiongoalrevenue, e.g. USD or EUR); when the report carried none, set the flow action's currency to one of them, or leave it out to use the goal's.",
  }),
  5612: () => ({ kind: 'retry', code: 'platform_error', message: 'Microsoft Advertising could not pass the conversions on internally (OfflineConversionsApplyFailed).' }),
  5613: () => ({
    kind: 'failed',
    code: 'offline_conversions_not_enabled',
    message: 'This Microsoft Advertising customer is not enabled for offline conversions (OfflineConversionPilotNotEnabledForCustomer).',
    hint: 'Ask Microsoft Advertising support to enable offline conversion import for the customer.',
  }),
  5614: () => ({ kind: 'retry_later', code: 'conversion_time_in_future', message: 'Microsoft Advertising saw the conversion time as in the future (FutureConversionTimeCannotBeSet).', afterMs: 5 * MINUTE_MS }),
  // "You must wait 2 hours after the goal was created before uploading offline conversions": it will be accepted later.
  5615: () => ({
    kind: 'retry_later',
    code: 'conversion_goal_not_ready',
    message: 'The offline conversion goal was created less than two hours ago; Microsoft accepts conversions for it two hours after its creation (OfflineConversionNotAcceptedForGoal).',
    afterMs: 30 * MINUTE_MS,
  }),
  5616: () => ({
    kind: 'failed',
    code: 'conversion_before_click',
    message: 'The conversion time is earlier than the ad click (ConversionTimeEarlierThanClickTime).',
    hint: 'Check the occurred_at of the report: it must be after the visitor clicked the ad.',
  }),
  5617: () => ({
    kind: 'failed',
    code: 'outside_conversion_window',
    message: "The ad click is older than the goal's conversion window (ClickIdDateTimeOutsideGoalConversionWindow).",
    hint: "Lengthen the goal's conversion window in Microsoft Advertising (up to 90 days) if later conversions should count.",
  }),
  8004: ownBug,
};

/** Microsoft spells the same codes symbolically; an error may carry only one of the two. */
const CODE_BY_NAME: Record<string, number> = {
  InternalError: 0,
  InvalidCredentials: 105,
  UserIsNotAuthorized: 106,
  AuthenticationTokenExpired: 109,
  RequestMissingHeaders: 116,
  CallRateExceeded: 117,
  OfflineConversionsNullOrEmpty: 5600,
  OfflineConversionsLimitExceeded: 5601,
  OfflineConversionIsNull: 5602,
  OfflineConversionMicrosoftClickIdNullOrEmpty: 5603,
  OfflineConversionMicrosoftClickIdInvalid: 5604,
  OfflineConversionNameNullOrEmpty: 5605,
  OfflineConversionNameInvalid: 5606,
  OfflineConversionTimeInvalid: 5607,
  OfflineConversionTimeNullOrEmpty: 5608,
  OfflineConversionTimeOutOfWindow: 5609,
  OfflineConversionValueInvalid: 5610,
  OfflineConversionCurrencyCodeInvalid: 5611,
  OfflineConversionsApplyFailed: 5612,
  OfflineConversionPilotNotEnabledForCustomer: 5613,
  FutureConversionTimeCannotBeSet: 5614,
  OfflineConversionNotAcceptedForGoal: 5615,
  ConversionTimeEarlierThanClickTime: 5616,
  ClickIdDateTimeOutsideGoalConversionWindow: 5617,
  EmailMustBeHashed: 8004,
};

function ownBug(name: string): Verdict {
  return {
    kind: 'failed',
    code: 'invalid_request',
    message: `Microsoft Advertising refused the request as malformed (${name}).`,
    hint: 'This is a fault in cnv, not in your setup: report it with the event id.',
  };
}

function goalNotFound(name: string): Verdict {
  return {
    kind: 'failed',
    code: 'conversion_goal_not_found',
    message: `No offline conversion goal of this account has the flow's conversion_name (${name}).`,
    hint: 'Create an offline conversion goal in Microsoft Advertising whose name is exactly the conversion_name of the flow action (same spelling, spaces and capitals), or correct conversion_name.',
  };
}

/** The verdict for one Microsoft error; unknown codes are permanent and named, so the user can look them up. */
export function verdictFor(error: MicrosoftError): Verdict {
  const code = error.code ?? (error.errorCode !== null ? CODE_BY_NAME[error.errorCode] : undefined) ?? null;
  // The symbolic name is the only text of Microsoft's that a message quotes: cleaned like every platform's words.
  const name = error.errorCode !== null ? platformText(error.errorCode, 80) : code !== null ? String(code) : 'unknown error';
  const known = code !== null ? VERDICTS[code] : undefined;
  if (known) return known(name);
  return {
    kind: 'failed',
    code: 'platform_rejected',
    message: `Microsoft Advertising refused the conversion: ${name}${code !== null && error.errorCode !== null ? ` (code ${code})` : ''}.`,
    hint: 'Look the code up in Microsoft\'s operation error codes (learn.microsoft.com/advertising/guides/operation-error-codes).',
  };
}

function asNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return null;
}

function readErrors(value: unknown): MicrosoftError[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null)
    .map((e) => ({ code: asNumber(e.Code), errorCode: typeof e.ErrorCode === 'string' ? e.ErrorCode : null, index: asNumber(e.Index) }));
}

/** The errors of a fault body: top-level (as the data object docs show it) or wrapped in `ApplicationFault`. */
export function readFault(body: unknown): { rowErrors: MicrosoftError[]; callErrors: MicrosoftError[]; trackingId: string | null } {
  let fault = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (typeof fault.ApplicationFault === 'object' && fault.ApplicationFault !== null) fault = fault.ApplicationFault as Record<string, unknown>;
  return {
    rowErrors: readErrors(fault.BatchErrors).filter((e) => e.index !== null),
    callErrors: [...readErrors(fault.Errors), ...readErrors(fault.OperationErrors), ...readErrors(fault.BatchErrors).filter((e) => e.index === null)],
    trackingId: typeof fault.TrackingId === 'string' ? fault.TrackingId : null,
  };
}

function toOutcome(verdict: Verdict, status: number | undefined, request: RequestSummary, retryAfterMs: number | null): DeliveryOutcome {
  const error: DeliveryError = { code: verdict.code, message: verdict.message, ...(status !== undefined ? { status } : {}) };
  if (verdict.kind === 'failed') return { kind: 'failed', error: { ...error, hint: verdict.hint }, request };
  if (verdict.kind === 'token_refused') return { kind: 'token_refused', error, request };
  if (verdict.kind === 'retry_later') return { kind: 'retry_later', error, afterMs: Math.max(verdict.afterMs, retryAfterMs ?? 0), request };
  const afterMs = retryAfterMs ?? verdict.afterMs;
  return { kind: 'retry', error, request, ...(afterMs !== undefined ? { afterMs } : {}) };
}

/** A call-wide verdict from the HTTP status alone, when the body names no error. */
function statusVerdict(status: number): Verdict {
  if (status === 429) return { kind: 'retry', code: 'rate_limited', message: 'Microsoft Advertising is limiting the rate of calls (HTTP 429).', afterMs: MINUTE_MS };
  if (status >= 500) return { kind: 'retry', code: 'platform_error', message: `Microsoft Advertising answered HTTP ${status}.` };
  if (status === 401) return VERDICTS[105]!('HTTP 401');
  if (status === 403) return VERDICTS[106]!('HTTP 403');
  if (status === 408) return { kind: 'retry', code: 'timeout', message: 'Microsoft Advertising timed the request out (HTTP 408).' };
  return ownBug(`HTTP ${status}`);
}

/** The answer to one ApplyOfflineConversions call, as received. */
export interface ApplyAnswer {
  status: number;
  retryAfter: string | null;
  /** The `TrackingId` response header ("The identifier of the log entry that contains the details of the API call"). */
  trackingId?: string | null;
  text: string;
}

/**
 * One outcome per sent conversion, in order. Rows named by a partial error get its verdict; the others are delivered
 * (Microsoft reports no error for a duplicate: "the first instance will be used and the others will be ignored").
 */
export function interpretApplyAnswer(answer: ApplyAnswer, summaries: readonly RequestSummary[], nowMs: number): DeliveryOutcome[] {
  const retryAfterMs = parseRetryAfterMs(answer.retryAfter, nowMs);
  const body = parseJson(answer.text);
  const bodyTrackingId = (body as { TrackingId?: unknown } | null)?.TrackingId;
  const trackingId = answer.trackingId ?? (typeof bodyTrackingId === 'string' ? bodyTrackingId : undefined);
  const withTracking = (summary: RequestSummary): RequestSummary =>
    typeof trackingId === 'string' ? { ...summary, tracking_id: trackingId } : summary;

  if (answer.status >= 200 && answer.status < 300) {
    const errors = readErrors((body as { PartialErrors?: unknown } | null)?.PartialErrors);
    if (body === null || typeof body !== 'object') {
      // A 2xx that is not the documented JSON: whether anything was applied is unknown; resending is safe (duplicates are ignored).
      return summaries.map((s) => toOutcome({ kind: 'retry', code: 'unreadable_answer', message: 'Microsoft Advertising answered with something other than JSON.' }, answer.status, s, retryAfterMs));
    }
    const unplaced = errors.filter((e) => e.index === null || e.index < 0 || e.index >= summaries.length);
    return summaries.map((summary, i) => {
      const own = errors.find((e) => e.index === i) ?? unplaced[0];
      if (own) return toOutcome(verdictFor(own), answer.status, withTracking(summary), retryAfterMs);
      return { kind: 'delivered', request: withTracking(summary), ...(typeof trackingId === 'string' ? { platformRequestId: trackingId } : {}) };
    });
  }

  const fault = readFault(body);
  const faultTrackingId = answer.trackingId ?? fault.trackingId;
  const withFaultTracking = (summary: RequestSummary): RequestSummary => (faultTrackingId ? { ...summary, tracking_id: faultTrackingId } : summary);
  const callError = fault.callErrors[0];
  const callVerdict = callError ? verdictFor(callError) : statusVerdict(answer.status);
  return summaries.map((summary, i) => {
    const own = fault.rowErrors.find((e) => e.index === i);
    if (own) return toOutcome(verdictFor(own), answer.status, withFaultTracking(summary), retryAfterMs);
    // A fault that names other rows only failed the call as a whole: this row was not applied and may go again.
    const verdict: Verdict =
      fault.rowErrors.length > 0 && !callError
        ? { kind: 'retry', code: 'batch_refused', message: 'Microsoft Advertising refused the batch because of another conversion in it.' }
        : callVerdict;
    return toOutcome(verdict, answer.status, withFaultTracking(summary), retryAfterMs);
  });
}

/** The verdict of a call-wide fault (for testConnection): null when the answer was a success. */
export function callFault(status: number, text: string): DeliveryError | null {
  if (status >= 200 && status < 300) return null;
  const fault = readFault(parseJson(text));
  const first = fault.callErrors[0] ?? fault.rowErrors[0];
  const verdict = first ? verdictFor(first) : statusVerdict(status);
  return { code: verdict.code, message: verdict.message, status, ...(verdict.kind === 'failed' ? { hint: verdict.hint } : {}) };
}
