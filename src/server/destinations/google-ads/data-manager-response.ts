/**
 * Reads the answer of events.ingest. Success is `{"requestId": "…"}`; a failure is the standard Google error
 * `{"error": {"code", "message", "status", "details": [ErrorInfo, BadRequest, RetryInfo, …]}}`
 * (https://developers.google.com/data-manager/api/devguides/concepts/understand-errors). The API is fail-fast: one
 * invalid event fails the whole request, and the BadRequest field violations say which (`events[3]…`), so the sender
 * can fail those and resend the rest. Reasons: https://developers.google.com/data-manager/api/reference/rest/v1/ErrorReason
 */
import type { DeliveryError } from '../destination';
import { parseJson, type HttpAnswer } from '../http';
import { SCOPE_INSUFFICIENT_REASON, scopeRefused } from './oauth';
import { platformText } from '../platform-text';
import { parseRetryAfterMs } from '../../../protocol/retry-after';

/** What an answer means for the events of the request that got it, before per-event summaries are attached. */
export type GroupOutcome =
  | { kind: 'retry'; error: DeliveryError; afterMs?: number }
  | { kind: 'retry_later'; error: DeliveryError; afterMs: number }
  | { kind: 'failed'; error: DeliveryError }
  | { kind: 'token_refused'; error: DeliveryError };

export type IngestVerdict =
  /** Accepted for processing; Google's id of the request, for diagnostics. */
  | { kind: 'accepted'; requestId: string | null }
  /** The same outcome for every event of the request (account problem, rate limit, outage). */
  | { kind: 'all'; outcome: GroupOutcome }
  /** Google refused the request because of these events (by index in the request); the others were not recorded. */
  | { kind: 'events'; failed: Map<number, DeliveryError> }
  /** Refused as invalid without naming an event: only splitting the request can find the bad one. */
  | { kind: 'unattributed'; error: DeliveryError };

/** A field violation of a google.rpc.BadRequest detail. */
export interface FieldViolation {
  field: string;
  description: string;
  reason?: string;
}

/** The parts of a Google error body the classification uses. */
export interface GoogleError {
  httpStatus: number;
  status: string;
  message: string;
  /** ErrorInfo reasons (ErrorReason values). */
  reasons: string[];
  violations: FieldViolation[];
  /** RetryInfo.retryDelay in milliseconds, when Google sent one. */
  retryDelayMs: number | null;
}

const PLATFORM = 'Google Ads (Data Manager API)';
/** Google's messages quote the values it refuses (a gclid, an email, a hash): cleaned, then cut short. */
const MAX_DETAIL = 200;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function clip(value: string): string {
  return platformText(value, MAX_DETAIL);
}

/** google.protobuf.Duration in JSON ("3s", "1.5s") as milliseconds; null when malformed. */
export function durationMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d+)(?:\.(\d{1,9}))?s$/.exec(value.trim());
  if (!match) return null;
  return Number(match[1]) * 1000 + Math.round(Number(`0.${match[2] ?? '0'}`) * 1000);
}

/** Parses a Google error answer; null when the body is not one. */
export function parseGoogleError(httpStatus: number, body: string): GoogleError | null {
  const json = parseJson(body) as { error?: Record<string, unknown> } | null;
  const error = json && typeof json === 'object' ? json.error : undefined;
  if (!error || typeof error !== 'object') return null;
  const reasons: string[] = [];
  const violations: FieldViolation[] = [];
  let retryDelayMs: number | null = null;
  const details = Array.isArray(error.details) ? (error.details as Record<string, unknown>[]) : [];
  for (const detail of details) {
    if (!detail || typeof detail !== 'object') continue;
    const type = text(detail['@type']);
    if (type.endsWith('google.rpc.ErrorInfo') && text(detail.reason)) reasons.push(text(detail.reason));
    if (type.endsWith('google.rpc.RetryInfo')) retryDelayMs = durationMs(detail.retryDelay);
    if (type.endsWith('google.rpc.BadRequest') && Array.isArray(detail.fieldViolations)) {
      for (const v of detail.fieldViolations as Record<string, unknown>[]) {
        if (!v || typeof v !== 'object') continue;
        violations.push({ field: text(v.field), description: clip(text(v.description)), ...(text(v.reason) ? { reason: text(v.reason) } : {}) });
      }
    }
  }
  return {
    httpStatus: typeof error.code === 'number' ? error.code : httpStatus,
    status: text(error.status),
    message: clip(text(error.message)),
    reasons,
    violations,
    retryDelayMs,
  };
}

/** The index of the event a field path points into (`events[3].adIdentifiers`, `events.3`), or null. */
export function eventIndexOf(field: string): number | null {
  const match = /^events(?:\[(\d+)\]|\.(\d+))/.exec(field);
  return match ? Number(match[1] ?? match[2]) : null;
}

type Rule = { code: string; message: string; hint: string };

/** Reasons that concern the account or the conversion action: every event of the request fails the same way. */
const ACCOUNT_RULES: Record<string, Rule> = {
  TERMS_AND_CONDITIONS_NOT_SIGNED: {
    code: 'customer_data_terms_not_accepted',
    message: 'Google refused the upload: the Google Ads account has not accepted the required terms.',
    hint: "An administrator of the Google Ads account must accept Google's customer data terms for it; then resend.",
  },
  DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED: {
    code: 'customer_data_terms_not_accepted',
    message: 'Google refused the hashed identifiers: the Google Ads account has not agreed to the enhanced conversions terms.',
    hint: "Accept the enhanced conversions customer data terms in the Google Ads account's conversion settings; then resend.",
  },
  DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS: {
    code: 'enhanced_conversions_for_leads_disabled',
    message: 'Google refused the hashed identifiers: enhanced conversions for leads is not turned on for the Google Ads account.',
    hint: 'Turn on enhanced conversions for leads in the Google Ads conversion settings; then resend.',
  },
  DESTINATION_ACCOUNT_DATA_POLICY_PROHIBITS_ENHANCED_CONVERSIONS: {
    code: 'enhanced_conversions_prohibited',
    message: "Google's customer data policies do not allow enhanced conversions for this Google Ads account.",
    hint: 'Contact your Google representative; conversions with a click id only can still be sent.',
  },
  INVALID_CONVERSION_ACTION_ID: {
    code: 'conversion_action_not_found',
    message: 'Google Ads does not know the conversion action of this flow action.',
    hint: "Check the action's conversion.id: it must be the id of a conversion action of this Google Ads account.",
  },
  INVALID_CONVERSION_ACTION_TYPE: {
    code: 'conversion_action_wrong_type',
    message: 'The conversion action cannot take uploaded conversions.',
    // Offline events need an UPLOAD_CLICKS conversion action (https://developers.google.com/data-manager/api/devguides/events/send-events).
    hint: "Use a conversion action of type 'Import from clicks' (UPLOAD_CLICKS).",
  },
  INVALID_DESTINATION: {
    code: 'destination_not_found',
    message: 'Google refused the destination (account or conversion action).',
    hint: 'Check the Google Ads customer ID of the connection, the manager account ID, and the conversion action id.',
  },
  NOT_FOUND: {
    code: 'destination_not_found',
    message: 'Google did not find the Google Ads account or the conversion action.',
    hint: 'Check the Google Ads customer ID of the connection and the conversion action id.',
  },
  PERMISSION_DENIED: {
    code: 'permission_denied',
    message: 'The connected Google user may not upload conversions to this Google Ads account.',
    hint: 'Connect with a Google user who has access to the account; when access goes through a manager account, set its ID on the connection.',
  },
};

/** Reasons a single event earns; the hint says what to change about such events. */
const EVENT_RULES: Record<string, Rule> = {
  NO_IDENTIFIERS_PROVIDED: {
    code: 'no_identifiers',
    message: 'Google refused the conversion: it has no click id and no user identifier.',
    hint: 'Report the email or phone (with country code) of the person, or make sure the ad click reached the page.',
  },
  INVALID_EVENT: { code: 'invalid_event', message: 'Google refused the conversion as invalid.', hint: 'See the message; if it names a field we build, report it as a bug.' },
  INVALID_FORMAT: { code: 'invalid_format', message: 'Google refused a field of the conversion as badly formatted.', hint: 'If it names a click id, the landing URL carried a damaged one; nothing can be resent.' },
  INVALID_HEX_ENCODING: { code: 'invalid_hash', message: 'Google refused a hashed identifier as malformed hex.', hint: 'This is a bug of the service: report it.' },
  INVALID_SHA256_FORMAT: { code: 'invalid_hash', message: 'Google refused a hashed identifier as not SHA-256.', hint: 'This is a bug of the service: report it.' },
  REQUIRED_FIELD_MISSING: { code: 'invalid_event', message: 'Google refused the conversion: a required field is missing.', hint: 'This is a bug of the service: report it.' },
};

const INVALID_ARGUMENT_RULE: Rule = {
  code: 'invalid_argument',
  message: 'Google refused the conversion as invalid.',
  hint: 'The conversion cannot be sent as it is; if the message names a field we build, report it as a bug.',
};

function errorFrom(rule: Rule, status: number, detail?: string): DeliveryError {
  return { code: rule.code, message: detail ? `${rule.message} Google said: ${platformText(detail, MAX_DETAIL * 2)}` : rule.message, hint: rule.hint, status };
}

function retryOutcome(code: string, message: string, status: number | undefined, afterMs: number | null): GroupOutcome {
  return { kind: 'retry', error: { code, message, ...(status ? { status } : {}) }, ...(afterMs !== null ? { afterMs } : {}) };
}

/** Classifies the answer to one ingest request. `nowMs` resolves an HTTP-date Retry-After. */
export function classifyIngestAnswer(answer: HttpAnswer, nowMs: number): IngestVerdict {
  if (!answer.answered) return { kind: 'all', outcome: { kind: 'retry', error: answer.error } };
  const { status } = answer;
  if (status >= 200 && status < 300) {
    const body = parseJson(answer.text) as { requestId?: unknown } | null;
    const requestId = body && typeof body === 'object' && typeof body.requestId === 'string' ? body.requestId : null;
    return { kind: 'accepted', requestId };
  }
  const error = parseGoogleError(status, answer.text);
  const headerDelay = parseRetryAfterMs(answer.headers.get('retry-after'), nowMs);
  const wait = headerDelay ?? error?.retryDelayMs ?? null;
  const grpc = error?.status ?? '';
  const detail = error?.message || undefined;

  if (status === 429 || grpc === 'RESOURCE_EXHAUSTED') {
    return { kind: 'all', outcome: retryOutcome('rate_limited', `${PLATFORM} is rate limiting requests (HTTP ${status}).`, status, wait) };
  }
  if (status >= 500 || ['INTERNAL', 'UNAVAILABLE', 'DEADLINE_EXCEEDED', 'ABORTED', 'UNKNOWN'].includes(grpc)) {
    return { kind: 'all', outcome: retryOutcome('platform_unavailable', `${PLATFORM} answered HTTP ${status}${grpc ? ` ${grpc}` : ''}.`, status, wait) };
  }
  if (status === 401 || grpc === 'UNAUTHENTICATED') {
    // "UNAUTHENTICATED (HTTP 401): The request does not have valid authentication credentials" (google.rpc.Code, as the
    // Data Manager API's error guide maps it): delivery drops the token, refreshes once and sends again.
    return { kind: 'all', outcome: { kind: 'token_refused', error: { code: 'unauthenticated', message: `${PLATFORM} refused the access token (HTTP ${status}).`, status } } };
  }
  const reasons = error?.reasons ?? [];
  if (reasons.includes(SCOPE_INSUFFICIENT_REASON)) return { kind: 'all', outcome: { kind: 'token_refused', error: scopeRefused('data_manager', status) } };
  const accountReason = reasons.find((r) => r in ACCOUNT_RULES) ?? (grpc === 'PERMISSION_DENIED' ? 'PERMISSION_DENIED' : grpc === 'NOT_FOUND' ? 'NOT_FOUND' : undefined);
  if (accountReason) return { kind: 'all', outcome: { kind: 'failed', error: errorFrom(ACCOUNT_RULES[accountReason]!, status, detail) } };
  if (status === 403) return { kind: 'all', outcome: { kind: 'failed', error: errorFrom(ACCOUNT_RULES.PERMISSION_DENIED!, status, detail) } };
  if (status === 404) return { kind: 'all', outcome: { kind: 'failed', error: errorFrom(ACCOUNT_RULES.NOT_FOUND!, status, detail) } };

  // A violation of the destination is the account's problem, whatever the reason says.
  const violations = error?.violations ?? [];
  if (violations.some((v) => v.field.startsWith('destinations'))) {
    return { kind: 'all', outcome: { kind: 'failed', error: errorFrom(ACCOUNT_RULES.INVALID_DESTINATION!, status, detail) } };
  }
  const failed = new Map<number, DeliveryError>();
  for (const violation of violations) {
    const index = eventIndexOf(violation.field);
    if (index === null || failed.has(index)) continue;
    const reason = violation.reason ?? reasons.find((r) => r in EVENT_RULES) ?? '';
    const rule = EVENT_RULES[reason] ?? INVALID_ARGUMENT_RULE;
    const field = violation.field.replace(/^events(\[\d+\]|\.\d+)\.?/, '');
    failed.set(index, errorFrom(rule, status, [field, violation.description].filter(Boolean).join(': ') || detail));
  }
  if (failed.size > 0) return { kind: 'events', failed };
  const reason = reasons.find((r) => r in EVENT_RULES);
  return { kind: 'unattributed', error: errorFrom(reason ? EVENT_RULES[reason]! : INVALID_ARGUMENT_RULE, status, detail) };
}
