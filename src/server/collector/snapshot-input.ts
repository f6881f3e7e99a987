/** Validation of a snapshot body at the collector's edge: every field of the protocol's Snapshot, nothing else trusted. */
import type { ConsentSignals, Snapshot, SnapshotTrigger, Touch } from '../../protocol/collector';
import { isCorrelationToken } from '../../protocol/cookies';
import { CLICK_ID_KEYS, PLATFORM_COOKIES, SIGNAL_VALUE_MAX, UTM_KEYS } from '../../protocol/signals';
import { isWellFormedText, parseJsonText, wellFormedText } from '../http/json-text';
import { ApiError, invalidParam } from '../http/errors';
import { isStorableTimestamp } from '../http/timestamps';
import { decodeUrlComponent } from '../http/url-component';

const TRIGGERS: readonly SnapshotTrigger[] = ['form_submit', 'api'];

/** Longest URL kept (page, landing, referrer): the body limit bounds it anyway; this keeps rows sane. */
const URL_MAX = 8192;

/** Parses and validates a snapshot body (JSON text); throws a 400 ApiError naming the first fault. */
export function parseSnapshotBody(text: unknown): Snapshot {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', 'Empty body: send the snapshot as JSON.');
  }
  return validateSnapshot(parseJsonText(text, { what: 'The body', protoKeys: 'drop', unpairedSurrogates: 'keep' }));
}

/**
 * Checks a parsed value against the Snapshot shape. Unknown fields and unknown signal keys are dropped, not refused:
 * a loader newer than this service (a click id added to the protocol) must not lose the whole snapshot. Text that is
 * not well-formed UTF-16 (an unpaired surrogate, which PostgreSQL refuses) is read leniently too: a signal value
 * holding one is dropped (a damaged click id matches no click), a URL or referrer is repaired (the surrogate becomes
 * U+FFFD), so the snapshot and the click data it carries are kept.
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
    touch: readTouch(body.touch),
    cookies: readCookies(body.cookies),
    ...(body.consent === undefined || body.consent === null ? {} : { consent: readConsent(body.consent) }),
  };
}

/** The touch of a snapshot or form submission: null, or its click ids, UTM, landing and capture time. */
export function readTouch(value: unknown): Touch | null {
  return value === null || value === undefined ? null : touch(value);
}

/** Platform cookies read by the loader (unknown names dropped). */
export function readCookies(value: unknown): Snapshot['cookies'] {
  return value === undefined || value === null ? {} : signals(value, 'cookies', PLATFORM_COOKIES);
}

/** Consent Mode's two signals as the page last set them; anything but granted/denied reads as null (the page never said). */
export function readConsent(value: unknown): ConsentSignals {
  const bag = record(value, 'consent');
  const answer = (v: unknown) => (v === 'granted' || v === 'denied' ? v : null);
  return { ad_user_data: answer(bag.ad_user_data), ad_personalization: answer(bag.ad_personalization) };
}

/** An ISO 8601 timestamp PostgreSQL can store, or a 400 naming `param`. */
export const readTimestamp = (value: unknown, param: string): string => timestamp(value, param);
/** An http(s) URL (repaired if it holds an unpaired surrogate), or a 400 naming `param`. */
export const readUrl = (value: unknown, param: string): string => url(value, param);
/** A referrer: a URL string or null. */
export const readOptionalUrl = (value: unknown, param: string): string | null => optionalUrlText(value, param);
/** A JSON object, or a 400 naming `param`. */
export const readRecord = (value: unknown, param: string): Record<string, unknown> => record(value, param);

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
    if (typeof raw === 'string' && !isWellFormedText(raw)) continue;
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
  if (!isStorableTimestamp(value)) throw invalidParam(param, `${param} must be an ISO 8601 timestamp with a time zone.`);
  return value;
}

function url(value: unknown, param: string): string {
  if (typeof value !== 'string' || value.length > URL_MAX || !/^https?:$/.test(parseUrl(value)?.protocol ?? '')) {
    throw invalidParam(param, `${param} must be an http(s) URL of at most ${URL_MAX} characters.`);
  }
  return withoutCredentials(wellFormedText(value));
}

/**
 * Parameter names that carry a credential: the tokens a sign-in redirect leaves in the address (OAuth's implicit flow
 * and OpenID Connect `#access_token=…&id_token=…`, Supabase's `#access_token=…&refresh_token=…` after a signup's
 * confirmation link). The page's address is stored and shown on the event page; a live token has no place there.
 */
const CREDENTIAL_PARAMETER = /^(?:access_token|id_token|refresh_token|provider_token|provider_refresh_token)$/i;

/**
 * Whether an address may hold a credential parameter: a parameter name holding `token` (every name above does) or a
 * percent escape (which may spell it). Most addresses hold neither, and skip the replacement's callback per parameter
 * (a third of a snapshot's checks).
 */
const MAY_HOLD_CREDENTIAL = /[?#&][^?#&=]*(?:token|%)/i;

/** The address without credential parameters in its query or fragment; an address without any is returned as it was. */
function withoutCredentials(address: string): string {
  if (!MAY_HOLD_CREDENTIAL.test(address)) return address;
  let removed = false;
  const kept = address.replace(/([?#&])([^?#&=]*)=[^&#]*/g, (pair: string, separator: string, name: string) => {
    // A name that is not percent-encoded text is compared as it is.
    if (!CREDENTIAL_PARAMETER.test(decodeUrlComponent(name) ?? name)) return pair;
    removed = true;
    return separator;
  });
  // Separators left behind: doubled, before the fragment (`?a=1&#x`, `?#x`), or at the end.
  return removed ? kept.replace(/([?#&])&+/g, '$1').replace(/[?&]+(?=#)/, '').replace(/[?&#]+$/, '') : address;
}

/** A referrer: a URL string, or null (an empty string counts as null, as document.referrer gives it). */
function optionalUrlText(value: unknown, param: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string' || value.length > URL_MAX) {
    throw invalidParam(param, `${param} must be a string of at most ${URL_MAX} characters or null.`);
  }
  return withoutCredentials(wellFormedText(value));
}

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}
