/** Validation of a snapshot body at the collector's edge: every field of the protocol's Snapshot, nothing else trusted. */
import type { Snapshot, SnapshotTrigger, Touch } from '../../protocol/collector';
import { isCorrelationToken } from '../../protocol/cookies';
import { CLICK_ID_KEYS, PLATFORM_COOKIES, SIGNAL_VALUE_MAX, UTM_KEYS } from '../../protocol/signals';
import { parseJsonText } from '../http/json-text';
import { ApiError, invalidParam } from '../http/errors';
import { isIsoTimestamp } from '../http/timestamps';

const TRIGGERS: readonly SnapshotTrigger[] = ['form_submit', 'api'];

/** Longest URL kept (page, landing, referrer): the body limit bounds it anyway; this keeps rows sane. */
const URL_MAX = 8192;

/** Parses and validates a snapshot body (JSON text); throws a 400 ApiError naming the first fault. */
export function parseSnapshotBody(text: unknown): Snapshot {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', 'Empty body: send the snapshot as JSON.');
  }
  return validateSnapshot(parseJsonText(text, 'The body'));
}

/**
 * Checks a parsed value against the Snapshot shape. Unknown fields and unknown signal keys are dropped, not refused:
 * a loader newer than this service (a click id added to the protocol) must not lose the whole snapshot.
 */
export function validateSnapshot(value: unknown): Snapshot {
  const body = record(value, 'body');
  if (!isCorrelationToken(body.correlation_token)) {
    throw invalidParam('correlation_token', 'correlation_token must be 22 base64url characters.');
  }
  const trigger = body.trigger;
  if (typeof trigger !== 'string' || !TRIGGERS.includes(trigger as SnapshotTrigger)) {
    throw invalidParam('trigger', `trigger must be one of ${TRIGGERS.join(', ')}.`);
  }
  return {
    correlation_token: body.correlation_token,
    occurred_at: timestamp(body.occurred_at, 'occurred_at'),
    trigger: trigger as SnapshotTrigger,
    page_url: url(body.page_url, 'page_url'),
    referrer: optionalUrlText(body.referrer, 'referrer'),
    touch: body.touch === null || body.touch === undefined ? null : touch(body.touch),
    cookies: body.cookies === undefined ? {} : signals(body.cookies, 'cookies', PLATFORM_COOKIES),
  };
}

function touch(value: unknown): Touch {
  const t = record(value, 'touch');
  return {
    click_ids: signals(t.click_ids, 'touch.click_ids', CLICK_ID_KEYS),
    utm: signals(t.utm, 'touch.utm', UTM_KEYS),
    landing_page_url: url(t.landing_page_url, 'touch.landing_page_url'),
    referrer: optionalUrlText(t.referrer, 'touch.referrer'),
    captured_at: timestamp(t.captured_at, 'touch.captured_at'),
  };
}

/** A map of known signal keys to trimmed, capped, non-empty strings (the loader's own rule); unknown keys are dropped. */
function signals<K extends string>(value: unknown, param: string, keys: readonly K[]): Partial<Record<K, string>> {
  const bag = record(value, param);
  const out: Partial<Record<K, string>> = {};
  for (const [key, raw] of Object.entries(bag)) {
    if (!keys.includes(key as K)) continue;
    if (typeof raw !== 'string' || raw.trim() === '' || raw.length > SIGNAL_VALUE_MAX) {
      throw invalidParam(`${param}.${key}`, `${param}.${key} must be a non-empty string of at most ${SIGNAL_VALUE_MAX} characters.`);
    }
    out[key as K] = raw;
  }
  return out;
}

function record(value: unknown, param: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidParam(param, `${param} must be a JSON object.`);
  }
  return value as Record<string, unknown>;
}

function timestamp(value: unknown, param: string): string {
  if (!isIsoTimestamp(value)) throw invalidParam(param, `${param} must be an ISO 8601 timestamp with a time zone.`);
  return value;
}

function url(value: unknown, param: string): string {
  if (typeof value !== 'string' || value.length > URL_MAX || !/^https?:$/.test(parseUrl(value)?.protocol ?? '')) {
    throw invalidParam(param, `${param} must be an http(s) URL of at most ${URL_MAX} characters.`);
  }
  return value;
}

/** A referrer: a URL string, or null (an empty string counts as null, as document.referrer gives it). */
function optionalUrlText(value: unknown, param: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string' || value.length > URL_MAX) {
    throw invalidParam(param, `${param} must be a string of at most ${URL_MAX} characters or null.`);
  }
  return value;
}

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}
