/** Reading the service's error envelope (shaped in src/protocol/errors.ts) and what a rejection means for the caller. */
import { isErrorType, type ErrorDetail, type ErrorType } from '../protocol/errors';
import { SIGNATURE_TOLERANCE_SECONDS } from '../protocol/webhook';

/**
 * The `error` object of the service's error envelope, as read by the client: `type` is `'unknown'` when the body carries
 * none this client knows (a newer service may add one), and `code` is `'unknown'` when it carries none.
 */
export type ServiceError = Omit<ErrorDetail, 'type'> & { type: ErrorType | 'unknown' };

/** The error of an error response body, or null when the body is not the service's envelope. */
export function parseServiceError(text: string): ServiceError | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const error = (parsed as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (!error || typeof error !== 'object' || typeof error.message !== 'string') return null;
  return {
    type: isErrorType(error.type) ? error.type : 'unknown',
    code: typeof error.code === 'string' ? error.code : 'unknown',
    message: error.message,
    ...(typeof error.param === 'string' ? { param: error.param } : {}),
  };
}

/** A sentence for a log line: what the service said and, where the status tells, the likely cause. */
export function describeRejection(httpStatus: number, error: ServiceError | null): string {
  const said = error ? ` ${error.code}: ${error.message}` : '';
  if (httpStatus === 401) return `The service rejected the signature (HTTP 401${said ? `,${said}` : ''}). ${signatureAdvice(error?.code)}`;
  if (httpStatus === 404 && isWrongAddress(error)) {
    return `The service found no such webhook (HTTP 404${said ? `,${said}` : ''}). Check siteKey and webhookBaseUrl.`;
  }
  return `The service rejected the report (HTTP ${httpStatus}${said ? `,${said}` : ''}).`;
}

/** What to do about a 401, by its code: a site without a webhook secret and a clock out of step need other fixes than a wrong secret. */
function signatureAdvice(code: string | undefined): string {
  switch (code) {
    case 'no_webhook_secret':
      return (
        'The site has no webhook secret yet: connect its API trigger source (the dashboard, or a connect_trigger_source ' +
        'handoff) and set `secret` to the secret its page shows.'
      );
    case 'timestamp_outside_tolerance':
      return `Check this machine's clock: the signature's time must be within ${SIGNATURE_TOLERANCE_SECONDS / 60} minutes of the service's.`;
    default:
      return "Check that `secret` is this trigger's current webhook secret (it may have been rotated) and that this machine's clock is correct.";
  }
}

/**
 * The 404 codes that mean the request went to the wrong address: no site with that key (`site_not_found`), or no such
 * route on that host (`route_not_found`). Any other 404 (an adjustment's `resource_missing`: no report with that
 * customer_event_id) is about the report, and its own message says so.
 */
const WRONG_ADDRESS_CODES: ReadonlySet<string> = new Set(['site_not_found', 'route_not_found']);

/** Whether a 404 says the address is wrong: one of those codes, or a body that is not the service's envelope at all. */
function isWrongAddress(error: ServiceError | null): boolean {
  return error === null || WRONG_ADDRESS_CODES.has(error.code);
}
