/**
 * What Meta's answer to one events request means for the events in it. Meta answers a whole request: `events_received`
 * on success, one Graph API error otherwise ("If any event you send in a batch is invalid, we reject the entire batch").
 *
 * Error shape and codes: https://developers.facebook.com/docs/graph-api/guides/error-handling
 * Rate limits (Marketing API, Business Use Case): https://developers.facebook.com/docs/marketing-api/overview/rate-limiting
 * and https://developers.facebook.com/docs/graph-api/overview/rate-limiting
 */
import { parseRetryAfterMs } from '../../../protocol/retry-after';
import type { DeliveryError } from '../destination';
import { parseJson, type HttpAnswer } from '../http';
import { platformText } from '../platform-text';

/** The classification of one answer, for every event of the request alike. */
export type MetaVerdict =
  | { kind: 'delivered'; eventsReceived: number; fbtraceId?: string }
  /** Transient: send again with backoff (`afterMs` when Meta said how long). */
  | { kind: 'retry'; error: DeliveryError; afterMs?: number }
  /** About the connection (token, dataset, permission): every event fails alike, splitting cannot help. */
  | { kind: 'failed'; error: DeliveryError }
  /** The access token was refused (code 190/102): the connection needs a new token. */
  | { kind: 'token_refused'; error: DeliveryError }
  /** About the events: one of them is invalid; a batch is split to find it, a single event fails with this. */
  | { kind: 'invalid_event'; error: DeliveryError };

/** The Graph API error object. */
export interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  is_transient?: boolean;
  error_user_title?: string;
  error_user_msg?: string;
  fbtrace_id?: string;
}

// 4 application, 17 user, 32 page, 613 custom rate limit, 341 application limit (Graph "Handling Errors");
// 80000–80014 Business Use Case limits (80004 is "too many calls to this ad-account").
const RATE_LIMIT_CODES = new Set([4, 17, 32, 341, 613]);
function isRateLimit(code: number | undefined): boolean {
  return code !== undefined && (RATE_LIMIT_CODES.has(code) || (code >= 80000 && code <= 80014));
}

/** Meta's own wait: a Retry-After header, else the largest `estimated_time_to_regain_access` (minutes) of X-Business-Use-Case-Usage. */
export function metaWaitMs(headers: Headers, nowMs: number): number | undefined {
  const retryAfter = parseRetryAfterMs(headers.get('retry-after'), nowMs);
  if (retryAfter !== null) return retryAfter;
  const usage = parseJson(headers.get('x-business-use-case-usage') ?? '');
  if (!usage || typeof usage !== 'object') return undefined;
  let minutes = 0;
  for (const entries of Object.values(usage as Record<string, unknown>)) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      const value = (entry as { estimated_time_to_regain_access?: unknown } | null)?.estimated_time_to_regain_access;
      if (typeof value === 'number' && Number.isFinite(value) && value > minutes) minutes = value;
    }
  }
  return minutes > 0 ? minutes * 60_000 : undefined;
}

/** A short, safe description of Meta's error: its codes and title, never more than Meta's own words cut short. */
function describe(error: GraphError): string {
  const codes = [error.code, error.error_subcode].filter((c) => c !== undefined).join('/');
  // Meta's words may quote what it refused (an email, a hash, an fbclid, a token): cleaned before they are kept.
  const words = platformText(error.error_user_title || error.message || 'an error', 160);
  return `Meta answered ${codes ? `error ${codes}` : 'an error'} (${words})`;
}

/** Classifies Meta's answer to a request that carried `sentCount` events. */
export function classifyMetaAnswer(answer: HttpAnswer, sentCount: number, nowMs: number): MetaVerdict {
  if (!answer.answered) return { kind: 'retry', error: answer.error };
  const { status, headers } = answer;
  const body = parseJson(answer.text) as { events_received?: unknown; fbtrace_id?: unknown; error?: GraphError } | null;

  if (status >= 200 && status < 300) {
    const received = body?.events_received;
    const fbtraceId = typeof body?.fbtrace_id === 'string' ? body.fbtrace_id : undefined;
    if (typeof received === 'number' && received === sentCount) {
      return { kind: 'delivered', eventsReceived: received, ...(fbtraceId ? { fbtraceId } : {}) };
    }
    // Meta documents all-or-nothing; a short count means the answer is not what Meta promises, so try again (the same
    // event_id and event_name let Meta recognise an event it already has).
    return {
      kind: 'retry',
      error: {
        code: 'unexpected_answer',
        message: `Meta answered ${status} but counted ${typeof received === 'number' ? received : 'no'} of ${sentCount} events.`,
        status,
      },
    };
  }

  const error: GraphError = body?.error && typeof body.error === 'object' ? body.error : {};
  const code = typeof error.code === 'number' ? error.code : undefined;
  const subcode = typeof error.error_subcode === 'number' ? error.error_subcode : undefined;
  const what = describe(error);

  if (isRateLimit(code) || status === 429) {
    const afterMs = metaWaitMs(headers, nowMs);
    return {
      kind: 'retry',
      error: { code: 'rate_limited', message: `${what}: too many calls for now.`, status },
      ...(afterMs !== undefined ? { afterMs } : {}),
    };
  }
  if (code === 190 || code === 102 || (code === undefined && error.type === 'OAuthException' && status === 401)) {
    // The system-user token was refused: there is no refresh token, so delivery makes the connection wait for a new one.
    return {
      kind: 'token_refused',
      error: {
        code: 'invalid_token',
        message: `${what}: the access token is invalid, expired or revoked.`,
        hint: 'Generate a new Conversions API access token in Events Manager (your dataset → Settings → Conversions API → Generate access token) and connect Meta again.',
        status,
      },
    };
  }
  if (code === 100 && subcode === 33) {
    return {
      kind: 'failed',
      error: {
        code: 'dataset_not_found',
        message: `${what}: the dataset (pixel) does not exist or this token may not use it.`,
        hint: 'Check the dataset (pixel) ID in Events Manager, and that the token was generated for that dataset (or that its system user has the dataset assigned).',
        status,
      },
    };
  }
  if (code === 10 || code === 3 || (code !== undefined && code >= 200 && code <= 299)) {
    return {
      kind: 'failed',
      error: {
        code: 'permission_denied',
        message: `${what}: the token is not allowed to send events to this dataset.`,
        hint: 'In Business Settings, assign the dataset (pixel) to the system user whose token cnv uses, then generate a new token and connect Meta again.',
        status,
      },
    };
  }
  if (code === 2635) {
    // "(#2635) You are calling a deprecated version of the Ads API. Please update to the latest version" (Meta's
    // developer blog, 2024-04-16, "Upcoming change in Marketing API version deprecation"): every event of every request
    // fails alike until the version setting changes, so the batch is not split to look for a bad event.
    return {
      kind: 'failed',
      error: {
        code: 'api_version_deprecated',
        message: `${what}: Meta no longer serves the Graph API version cnv calls.`,
        hint: "Set CNV_META_GRAPH_API_VERSION to a version Meta still serves (Meta's Graph API versions page lists them), restart the service, then send the failed events again (redeliver).",
        status,
      },
    };
  }
  // 368 "Temporarily blocked for policies violations: Wait and retry the operation" (Handling Errors): about the
  // account, not an event, so not split and not failed.
  if (error.is_transient === true || status >= 500 || code === 1 || code === 2 || code === 368) {
    const afterMs = metaWaitMs(headers, nowMs);
    return {
      kind: 'retry',
      error: { code: 'meta_unavailable', message: `${what}: a temporary fault at Meta.`, status },
      ...(afterMs !== undefined ? { afterMs } : {}),
    };
  }
  if (code === 100 || status === 400) {
    return {
      kind: 'invalid_event',
      error: {
        code: 'invalid_parameter',
        message: `${what}: Meta refused the event.`,
        hint: 'Meta refused a field of this event; the Meta error code above says which rule. If it repeats for every event, check the Graph API version setting (CNV_META_GRAPH_API_VERSION).',
        status,
      },
    };
  }
  return {
    kind: 'failed',
    error: {
      code: 'meta_rejected',
      message: `${what}; HTTP ${status}.`,
      hint: 'Check the Meta connection (dataset ID and access token) and connect Meta again if it changed.',
      status,
    },
  };
}
