/** The signed webhook through which a customer's backend reports a signup: path, body, limits and signing string. */

/** Path prefix of the webhook bridge, on the webhook base URL. */
export const WEBHOOK_PREFIX = '/api/webhook-bridge';

/** Header carrying `t=<unix seconds>,v1=<hex hmac>`. */
export const SIGNATURE_HEADER = 'X-Service-Signature';

/** Signatures older (or further in the future) than this many seconds are rejected. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** A trigger key: 1 to 64 characters of `[A-Za-z0-9_-]`. */
export const TRIGGER_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Longest customer_event_id accepted. */
export const CUSTOMER_EVENT_ID_MAX = 200;

/** Longest identity field (email, phone, first_name, last_name) accepted, in characters. */
export const IDENTITY_VALUE_MAX = 512;

/** Largest webhook body accepted, in bytes. */
export const WEBHOOK_MAX_BYTES = 64 * 1024;

/** Per-attempt timeout of the official client, in milliseconds. */
export const CLIENT_ATTEMPT_TIMEOUT_MS = 5000;

/** Path of the saas-signup webhook of a site's API trigger; values are URL-encoded. */
export function saasSignupPath(siteKey: string, triggerKey: string): string {
  return `${WEBHOOK_PREFIX}/saas-signup/${encodeURIComponent(siteKey)}/${encodeURIComponent(triggerKey)}`;
}

/** Whether a value is a valid trigger key. */
export function isTriggerKey(value: unknown): value is string {
  return typeof value === 'string' && TRIGGER_KEY_PATTERN.test(value);
}

/** The webhook request body (API trigger). */
export interface SaasSignupReport {
  correlation_token: string | null;
  customer_event_id: string;
  email?: string | null;
  phone?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  allow_uncorrelated?: boolean;
}

/**
 * Outcome of a report. `promoted`: one or more live flows fired. `no_matching_flow`: kept, but no live flow has
 * this trigger key. A repeat of a customer_event_id answers with the first report's response.
 */
export type SaasSignupStatus = 'promoted' | 'no_matching_flow';

/** The webhook response body. */
export interface SaasSignupResponse {
  status: SaasSignupStatus;
  promoted_count: number;
  customer_event_id: string;
  /** Whether the report was paired with a browser snapshot (or is waiting for one); false when sent without a token. */
  correlated?: boolean;
}

/** The string that is signed: `{timestamp}.POST.{path}.{body}`. */
export function signingString(timestamp: number | string, path: string, body: string): string {
  return `${timestamp}.POST.${path}.${body}`;
}

/** Builds the signature header value from a timestamp and one or more hex digests. */
export function formatSignatureHeader(timestamp: number, digests: readonly string[]): string {
  return [`t=${timestamp}`, ...digests.map((d) => `v1=${d}`)].join(',');
}

/** Parses a signature header into its timestamp and v1 digests; null when it has neither. */
export function parseSignatureHeader(header: string | null | undefined): { timestamp: number; digests: string[] } | null {
  if (!header) return null;
  let timestamp = Number.NaN;
  const digests: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) digests.push(value.toLowerCase());
  }
  if (!Number.isFinite(timestamp) || digests.length === 0) return null;
  return { timestamp, digests };
}
