/** The signed webhook through which a customer's backend reports a signup: path, body, limits and signing string. */

/** Path prefix of the webhook bridge, on the webhook base URL. */
export const WEBHOOK_PREFIX = '/api/webhook-bridge';

/** Header carrying `t=<unix seconds>,v1=<hex hmac>`. */
export const SIGNATURE_HEADER = 'X-Service-Signature';

/** Signatures older (or further in the future) than this many seconds are rejected. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** A trigger key: 1 to 64 characters of `[A-Za-z0-9_-]`. */
export const TRIGGER_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Longest customer_event_id accepted, in characters (see exceedsCharacters). */
export const CUSTOMER_EVENT_ID_MAX = 200;

/**
 * Whether `text` is longer than `max` characters, counted as the spec and the OpenAPI document's `maxLength` count
 * them: in Unicode code points (an emoji is one character), not in UTF-16 code units (where it is two).
 */
export function exceedsCharacters(text: string, max: number): boolean {
  if (text.length <= max) return false; // never more code points than code units
  let count = 0;
  for (const _ of text) if (++count > max) return true;
  return false;
}

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

/** Path of the webhook of a later stage (a `conversion` API trigger); values are URL-encoded. */
export function conversionPath(siteKey: string, stageKey: string): string {
  return `${WEBHOOK_PREFIX}/conversion/${encodeURIComponent(siteKey)}/${encodeURIComponent(stageKey)}`;
}

/** Path of the webhook of an API trigger's key: a signup's, or a later stage's (a `conversion` trigger). */
export function apiTriggerPath(siteKey: string, key: string, type: 'saas_signup' | 'conversion'): string {
  return type === 'conversion' ? conversionPath(siteKey, key) : saasSignupPath(siteKey, key);
}

/** Path of the adjustments webhook of a site (restate or retract a reported conversion); URL-encoded. */
export function adjustmentPath(siteKey: string): string {
  return `${WEBHOOK_PREFIX}/adjustment/${encodeURIComponent(siteKey)}`;
}

/** Largest conversion value accepted (in the currency's major unit, e.g. euros). */
export const VALUE_MAX = 1_000_000_000;

/** Most decimal places a value may have. */
export const VALUE_MAX_DECIMALS = 6;

/** Longest customer_id (the caller's stable id of a customer or account) accepted. */
export const CUSTOMER_ID_MAX = 200;

/** Longest adjustment_id accepted. */
export const ADJUSTMENT_ID_MAX = 200;

/** How far back a later stage's or an adjustment's occurred_at may lie, in days. */
export const OCCURRED_AT_MAX_AGE_DAYS = 90;

/**
 * How far a number may lie from a value with at most VALUE_MAX_DECIMALS decimals and still count as that value:
 * 1e-9, or 1e-13 of the number when that is more (from 10,000 up). A double carries about 16 significant digits, so
 * ordinary arithmetic on amounts leaves noise far below that: 29.9 * 1.19 is 35.580999999999996 (7e-15 off 35.581),
 * 100 * 1.1 is 110.00000000000001 (1.4e-14 off), 0.1 + 0.2 is 0.30000000000000004, a thousand additions of 0.1 end
 * 1.4e-12 off 100, and 1,000,000.1 - 1,000,000 is 2.3e-11 off 0.1. The part that grows with the number (about 450
 * times the spacing of doubles there) covers large amounts, where one rounding step alone exceeds 1e-9 (from about
 * 8 million). A 7th or 8th decimal a caller actually wrote (1.2345678, 0.00000005) lies 1e-8 or more off and is
 * refused; digits from the 10th on are below the bound and are rounded away like noise.
 */
export const VALUE_NOISE_ABSOLUTE = 1e-9;
/** The relative part of the noise bound: see VALUE_NOISE_ABSOLUTE. */
export const VALUE_NOISE_RELATIVE = 1e-13;

/**
 * The conversion value a number stands for: the number rounded to VALUE_MAX_DECIMALS (6) decimals when it is finite,
 * from 0 to VALUE_MAX, and within float noise (VALUE_NOISE_ABSOLUTE) of that rounding; else null. So
 * 35.580999999999996 (29.9 * 1.19) is 35.581, and 1.2345678 (a 7th decimal) is null. The service stores and sends
 * the rounded value; the client sends it rounded.
 */
export function conversionValueOf(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return null;
  // toFixed rounds the exact binary value to 6 decimals; Number() reads that back as the nearest double.
  const rounded = Number(value.toFixed(VALUE_MAX_DECIMALS));
  if (rounded > VALUE_MAX) return null;
  const noise = Math.max(VALUE_NOISE_ABSOLUTE, value * VALUE_NOISE_RELATIVE);
  return Math.abs(value - rounded) <= noise ? rounded : null;
}

/**
 * Whether a value is a conversion value the service takes: a finite number from 0 to VALUE_MAX with at most
 * VALUE_MAX_DECIMALS decimal places, float noise aside ({@link conversionValueOf}: 29.9 * 1.19 qualifies, 1e-7 does not).
 */
export function isConversionValue(value: unknown): value is number {
  return conversionValueOf(value) !== null;
}

/** The value fields any report may carry: a value with its currency, and the customer it belongs to. */
export interface ReportValueFields {
  /** 0 to 1,000,000,000, at most 6 decimals; requires `currency`. */
  value?: number | null;
  /** ISO 4217, three capital letters; required with `value`. */
  currency?: string | null;
  /** The caller's stable id of the customer or account, 1 to 200 characters: links later stages to the signup. */
  customer_id?: string | null;
}

/** Whether a value is a valid trigger key. */
export function isTriggerKey(value: unknown): value is string {
  return typeof value === 'string' && TRIGGER_KEY_PATTERN.test(value);
}

/** The webhook request body (API trigger). */
export interface SaasSignupReport extends ReportValueFields {
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
  /**
   * Whether the report was paired with a browser snapshot (or is waiting for one); false when sent without a token.
   * Always sent (a repeat's stored first response has it too).
   */
  correlated: boolean;
}

/** The body of a later stage's report (`POST …/conversion/{site_key}/{trigger_key}`). */
export interface ConversionReport extends ReportValueFields {
  customer_event_id: string;
  customer_id: string;
  correlation_token?: string | null;
  /** ISO 8601; default now; at most 90 days old. */
  occurred_at?: string | null;
  email?: string | null;
  phone?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  allow_uncorrelated?: boolean;
}

/** How a later stage found its click: by its token, through the signup of its customer_id, or not at all. */
export type ConversionMatch = 'click' | 'identity' | 'none';

/** The response to a later stage's report: the webhook response plus how its click was found. */
export interface ConversionResponse extends SaasSignupResponse {
  match: ConversionMatch;
}

/** The two kinds of adjustment: change the value of a reported conversion, or take it back. */
export const ADJUSTMENT_TYPES = ['restate', 'retract'] as const;
export type AdjustmentType = (typeof ADJUSTMENT_TYPES)[number];

/** The body of an adjustment (`POST …/adjustment/{site_key}`). */
export interface AdjustmentReport {
  adjustment_id: string;
  customer_event_id: string;
  type: AdjustmentType;
  /** Required for restate: the conversion's new (total) value. */
  value?: number | null;
  currency?: string | null;
  /** When the adjustment happened (ISO 8601; default now). */
  occurred_at?: string | null;
}

/** The response to an adjustment: how many events of that report it applies to. */
export interface AdjustmentResponse {
  status: 'accepted';
  adjustment_id: string;
  events: number;
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
