/**
 * Reads LinkedIn's answers. A Rest.li BATCH_CREATE answers per element (`{elements: [{status: 201}, ...]}`, an error
 * element carrying `status` and `error`); a fault of the whole call is an HTTP error with LinkedIn's error body
 * `{status, serviceErrorCode, code, message}`.
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
 * https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/error-handling
 */
import type { DeliveryError } from '../destination';
import { parseJson } from '../http';
import { platformText } from '../platform-text';
import { parseRetryAfterMs } from '../../../protocol/retry-after';

/** What LinkedIn said about one element of a batch. */
export interface ElementResult {
  status: number;
  code: string | null;
  message: string | null;
}

/** How a whole call (or one element) ends, before it is tied to the events it carried. */
export type Verdict =
  | { kind: 'delivered'; duplicate: boolean }
  | { kind: 'retry'; error: DeliveryError; afterMs?: number }
  | { kind: 'failed'; error: DeliveryError }
  /** The access token was refused (HTTP 401): delivery refreshes once and sends again. */
  | { kind: 'token_refused'; error: DeliveryError };

function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** LinkedIn's words, cleaned of what identifies a person (a Rest.li validation error quotes the value it refused). */
function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? platformText(value, 300) : null;
}

/** LinkedIn's error code when it looks like one (`INVALID_ARGUMENT`), else null: a code is never free text. */
function codeOf(value: unknown): string | null {
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,80}$/.test(value) ? value : null;
}

/** LinkedIn's error body, read leniently: its `code` (or service error code) and `message`. */
export function readErrorBody(body: unknown): { code: string | null; message: string | null } {
  const error = asObject(body);
  if (error === null) return { code: null, message: null };
  const serviceCode = typeof error.serviceErrorCode === 'number' ? `service_error_${error.serviceErrorCode}` : null;
  return { code: codeOf(error.code) ?? serviceCode, message: text(error.message) };
}

/** The per-element results of a batch answer, in request order; null when the answer does not have one per element. */
export function readElementResults(bodyText: string, count: number): ElementResult[] | null {
  const elements = asObject(parseJson(bodyText))?.elements;
  if (!Array.isArray(elements) || elements.length !== count) return null;
  const results: ElementResult[] = [];
  for (const raw of elements) {
    const element = asObject(raw);
    if (element === null || typeof element.status !== 'number') return null;
    const error = readErrorBody(element.error);
    results.push({ status: element.status, code: error.code, message: error.message });
  }
  return results;
}

function looksLikeConversionRule(message: string | null): boolean {
  return message !== null && /conversion/i.test(message) && !/conversionHappenedAt|conversionValue/i.test(message);
}

/** The verdict on a status LinkedIn gave (to the whole call or to one element). */
export function verdictOf(status: number, code: string | null, message: string | null, retryAfter: string | null, nowMs: number): Verdict {
  if (status >= 200 && status < 300) return { kind: 'delivered', duplicate: false };
  // A create of an event LinkedIn already holds; LinkedIn deduplicates on eventId, so it is recorded once.
  if (status === 409) return { kind: 'delivered', duplicate: true };
  const said = message ?? `LinkedIn answered HTTP ${status}.`;
  const base = { code: code ?? `http_${status}`, message: said, status };
  if (status === 429) {
    const afterMs = parseRetryAfterMs(retryAfter, nowMs);
    return { kind: 'retry', error: { ...base, code: 'rate_limited', message: `LinkedIn is throttling the app: ${said}` }, ...(afterMs === null ? {} : { afterMs }) };
  }
  if (status >= 500 || status === 408) {
    const afterMs = parseRetryAfterMs(retryAfter, nowMs);
    return { kind: 'retry', error: { ...base, code: 'platform_unavailable' }, ...(afterMs === null ? {} : { afterMs }) };
  }
  if (status === 401) {
    // "401 Unauthorized: … the access token is expired, revoked or malformed" (LinkedIn API error handling, e.g.
    // serviceErrorCode 65601 REVOKED_ACCESS_TOKEN / 65600 INVALID_ACCESS_TOKEN): refresh once and send again.
    return {
      kind: 'token_refused',
      error: {
        ...base,
        code: 'token_refused',
        hint: "The LinkedIn authorization expired or was revoked: connect LinkedIn again (Reconnect on the dashboard's Destinations page, or a connect_destination handoff for linkedin through the API).",
      },
    };
  }
  if (status === 403) {
    return {
      kind: 'failed',
      error: {
        ...base,
        code: 'permission_denied',
        hint:
          'The LinkedIn member who connected cnv needs the rw_conversions permission and a role on the ad account that owns the conversion rule ' +
          '(account billing admin, account manager, campaign manager or creative manager, not viewer); the LinkedIn app needs the Conversions API product.',
      },
    };
  }
  if (status === 426) {
    return {
      kind: 'failed',
      error: { ...base, code: 'api_version_sunset', hint: 'Set CNV_LINKEDIN_API_VERSION to a LinkedIn-Version (YYYYMM) that LinkedIn still supports.' },
    };
  }
  if (status === 404 || (status === 422 && looksLikeConversionRule(message))) {
    return {
      kind: 'failed',
      error: {
        ...base,
        code: 'invalid_conversion_rule',
        hint: 'Check config.conversion_rule: the rule must exist, be enabled, use the Conversions API as its source, and belong to the connected ad account.',
      },
    };
  }
  return {
    kind: 'failed',
    error: { ...base, code: code ?? 'rejected', hint: 'LinkedIn refused this event as sent; see the message for the field it names.' },
  };
}
