/**
 * Reads a Google Ads API answer to uploadClickConversions into a delivery outcome. Google reports a bad row of a
 * partial-failure request inside a 200 (`partialFailureError`), and request-level faults as an HTTP error with a
 * `google.rpc.Status` body whose details hold a GoogleAdsFailure.
 */
import type { DeliveryError, DeliveryOutcome, RequestSummary } from '../destination';
import { parseRetryAfterMs } from '../../../protocol/retry-after';
import { durationMs as parseDuration, parseGoogleError } from './data-manager-response';
import { SCOPE_INSUFFICIENT_REASON, scopeRefused } from './oauth';
import { platformText } from '../platform-text';

function delivered(request: RequestSummary): DeliveryOutcome {
  return { kind: 'delivered', request };
}

/** A transient fault; `afterMs` is Google's own wish (Retry-After, RetryInfo), when it said. */
function retry(error: DeliveryError, afterMs: number | null, request: RequestSummary): DeliveryOutcome {
  return afterMs === null ? { kind: 'retry', error, request } : { kind: 'retry', error, afterMs, request };
}

function failed(error: DeliveryError, request: RequestSummary): DeliveryOutcome {
  return { kind: 'failed', error, request };
}

/** One error of a GoogleAdsFailure, as the REST JSON mapping spells it. */
interface GoogleAdsError {
  errorCode?: Record<string, unknown>;
  message?: string;
  location?: { fieldPathElements?: Array<{ fieldName?: string; index?: number }> };
  details?: { quotaErrorDetails?: { retryDelay?: string } };
}

interface RpcStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ '@type'?: string; errors?: GoogleAdsError[]; retryDelay?: string; requestId?: string }>;
}

/** Row errors that mean Google already holds this row: a resend (crash, restart) of the same order id. */
const ALREADY_RECORDED = new Set(['ORDER_ID_ALREADY_IN_USE', 'CLICK_CONVERSION_ALREADY_EXISTS']);

/**
 * "CONVERSION_ALREADY_RETRACTED: The conversion was already retracted. This adjustment was not processed."
 * (ConversionAdjustmentUploadError). For a retraction that is what was asked for (a resend, or a second refund), so it
 * counts as applied; for a restatement it is a refusal: Google keeps the conversion retracted, not at the new value.
 */
const ALREADY_RETRACTED = 'CONVERSION_ALREADY_RETRACTED';
const RESTATED_AFTER_RETRACTION_HINT =
  'Google Ads keeps a retracted conversion retracted and takes no restatement of it; if the customer counts again, report a new conversion (a new customer_event_id).';

/**
 * Row errors Google documents as "try again" later: TOO_RECENT_CONVERSION_ACTION ("Try importing again in 6 hours") and
 * TOO_RECENT_EVENT (ConversionUploadError), and TOO_RECENT_CONVERSION (ConversionAdjustmentUploadError: "Try adjusting
 * a conversion that occurred at least 24 hours ago"; Google stopped answering it in September 2024, see
 * legacy-adjustments.ts, which sends adjustments at once: should it come all the same, the adjustment waits and goes again).
 */
const TOO_RECENT = new Set(['TOO_RECENT_CONVERSION_ACTION', 'TOO_RECENT_EVENT', 'TOO_RECENT_CONVERSION']);
const TOO_RECENT_RETRY_MS = 6 * 60 * 60_000;

/**
 * What to do about errors that no resend mends (facts and sources: legacy-request.ts). Access to the Google Ads API
 * belongs to the Google Cloud project of the service's OAuth client (CNV_GOOGLE_OAUTH_CLIENT_ID) since developer
 * tokens were sunset.
 */
const HINTS: Record<string, string> = {
  CUSTOMER_NOT_ALLOWLISTED_FOR_THIS_FEATURE:
    "Google no longer accepts uploadClickConversions from this project: connect Google Ads again with the API left empty (Google's Data Manager API).",
  CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION:
    "The Google Cloud project of the service's OAuth client has test access only: apply for Explorer access on the Google Ads API Overview page of the Cloud console, or use the Data Manager API.",
  ACTION_NOT_PERMITTED:
    "The Google Cloud project of the service's OAuth client may lack production access: apply for Explorer access on the Google Ads API Overview page of the Cloud console, or use the Data Manager API.",
};

/** A DeliveryError, with the hint for its code when there is one. */
function deliveryError(code: string, message: string, status: number): DeliveryError {
  const hint = HINTS[code];
  return hint ? { code, message, status, hint } : { code, message, status };
}

function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The enum value of an errorCode (`{conversionUploadError: 'UNPARSEABLE_GCLID'}` is `UNPARSEABLE_GCLID`). */
function errorCodeOf(error: GoogleAdsError): string | null {
  const values = Object.values(error.errorCode ?? {});
  return typeof values[0] === 'string' ? values[0] : null;
}

function adsErrors(status: RpcStatus | null): GoogleAdsError[] {
  return (status?.details ?? []).flatMap((d) => (Array.isArray(d.errors) ? d.errors : []));
}

/** Errors of the row at `index` of `rowField` (errors without a location belong to every row). */
function rowErrors(status: RpcStatus, index: number, rowField: string): GoogleAdsError[] {
  return adsErrors(status).filter((e) => {
    const first = e.location?.fieldPathElements?.[0];
    return !first || first.fieldName !== rowField || (first.index ?? 0) === index;
  });
}

function retryDelayOf(status: RpcStatus | null): number | null {
  for (const detail of status?.details ?? []) {
    const delay = parseDuration(detail.retryDelay);
    if (delay !== null) return delay;
  }
  for (const error of adsErrors(status)) {
    const delay = parseDuration(error.details?.quotaErrorDetails?.retryDelay);
    if (delay !== null) return delay;
  }
  return null;
}

function describe(status: RpcStatus | null, httpStatus: number): DeliveryError {
  const first = adsErrors(status)[0];
  const code = (first && errorCodeOf(first)) ?? status?.status ?? `http_${httpStatus}`;
  const said = first?.message ?? status?.message;
  return deliveryError(code, said ? platformText(said) : `Google Ads answered HTTP ${httpStatus}.`, httpStatus);
}

/**
 * Turns an HTTP answer (status, Retry-After header, body text) to an upload of several rows into one outcome per row,
 * in request order (`summaries[i]` describes `{rowField}[i]`: `conversions` or `conversion_adjustments`).
 */
export function interpretUploadResponse(
  httpStatus: number,
  retryAfterHeader: string | null,
  bodyText: string,
  summaries: readonly RequestSummary[],
  now: Date,
  rowField = 'conversions',
): DeliveryOutcome[] {
  let body: Record<string, unknown> | null = null;
  try {
    body = asObject(JSON.parse(bodyText));
  } catch {
    body = null;
  }

  if (httpStatus >= 200 && httpStatus < 300) {
    if (body === null) {
      // We cannot tell whether Google recorded them; a resend is safe because the order ids dedupe it.
      const error = { code: 'invalid_response', message: 'Google Ads answered 2xx with a body that is not JSON.', status: httpStatus };
      return summaries.map((summary) => retry(error, null, summary));
    }
    const jobId = body.jobId === undefined ? {} : { job_id: String(body.jobId) };
    const partial = asObject(body.partialFailureError) as RpcStatus | null;
    return summaries.map((summary, index) => {
      const errors = partial ? rowErrors(partial, index, rowField) : [];
      if (errors.length === 0) return delivered({ ...summary, ...jobId });
      const error = errors[0]!;
      const code = errorCodeOf(error) ?? 'partial_failure';
      const said = error.message ?? partial?.message;
      const message = said ? platformText(said) : 'Google Ads rejected the conversion.';
      if (ALREADY_RECORDED.has(code)) return delivered({ ...summary, ...jobId, deduplicated: code });
      if (code === ALREADY_RETRACTED) {
        if (summary.adjustment_type === 'RETRACTION') return delivered({ ...summary, ...jobId, deduplicated: code });
        return failed({ code, message, status: httpStatus, hint: RESTATED_AFTER_RETRACTION_HINT }, { ...summary, ...jobId });
      }
      if (TOO_RECENT.has(code)) return retry({ code, message, status: httpStatus }, TOO_RECENT_RETRY_MS, summary);
      return failed(deliveryError(code, message, httpStatus), { ...summary, ...jobId });
    });
  }

  const status = asObject(body?.error) as RpcStatus | null;
  const error = describe(status, httpStatus);
  if (httpStatus === 429 || httpStatus === 408 || httpStatus >= 500) {
    const afterMs = parseRetryAfterMs(retryAfterHeader, now.getTime()) ?? retryDelayOf(status);
    return summaries.map((summary) => retry(error, afterMs, summary));
  }
  if (parseGoogleError(httpStatus, bodyText)?.reasons.includes(SCOPE_INSUFFICIENT_REASON)) {
    // A token without the Google Ads API's scope (a Data Manager sign-in): refreshing cannot add it; a new sign-in can.
    return summaries.map((summary) => ({ kind: 'token_refused', error: scopeRefused('google_ads_api', httpStatus), request: summary }));
  }
  if (httpStatus === 401 || status?.status === 'UNAUTHENTICATED') {
    // "UNAUTHENTICATED … the OAuth access token is expired or invalid" (Google Ads API, Common errors, AuthenticationError):
    // delivery drops the token, refreshes once and sends again.
    return summaries.map((summary) => ({ kind: 'token_refused', error, request: summary }));
  }
  return summaries.map((summary) => failed(error, summary));
}
