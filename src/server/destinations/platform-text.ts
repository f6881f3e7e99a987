/**
 * What an ad platform says, made safe to keep. Platforms quote the values they refuse (Google's field violations, a
 * LinkedIn Rest.li validation error, Meta's error_user_msg, …), and what they say ends in a `DeliveryError` that is
 * stored on the event action, logged ("delivery failed") and sent in `event.failed` notifications. The contract
 * (destination.ts) is that such a message never holds an identity value; this module is the one place that keeps it,
 * the same for every platform:
 *
 * - `platformText(raw, max)`: every quote of a platform's words (each platform's response.ts) goes through it. It cuts
 *   out what identifies a person whatever was sent (email-shaped text, SHA-256 and other long hex runs, long opaque
 *   id-like runs such as click ids and tokens, IPv4 addresses, `+` phone numbers), then shortens the text.
 * - `cleanPlatform(platform)`: the registry wraps every platform with it, so every error of a conversion send, an
 *   adjustment, a connection test or a diagnosis is cleaned once more with, in addition, every value cnv sent in that
 *   batch removed (plain and normalised identity fields, the customer id, click ids, cookies, IP address, user agent,
 *   page address), wherever it appears in the message or the hint. The connection's secrets (its credentials, the
 *   access tokens the call was given, the service's developer tokens) are removed too: by every `platformText` inside
 *   the call (from the raw words, before the patterns and the cut), again from the errors returned, and from the
 *   message and stack of an error the call throws.
 *
 * Each removal leaves `[removed]`: short codes (`INVALID_GCLID`), field paths (`/elements/0/user/userIds/0/idValue`,
 * `events[0].adIdentifiers.gclid`) and account or conversion ids stay, so the message still says what went wrong.
 */
import { GRANTED_SCOPE_CREDENTIAL, OAUTH_CLIENT_CREDENTIAL } from './destination';
import { pageUrlForPlatform } from './browser-signals';
import type {
  AdjustmentInput,
  AdjustmentOutcome,
  ConnectionTestResult,
  DeliveryError,
  DeliveryInput,
  DeliveryOutcome,
  DestinationPlatform,
  Diagnosis,
  SendContext,
} from './destination';

/** What replaces a removed value. */
export const REMOVED = '[removed]';

/** How long a quote of a platform may be, by default. */
export const MAX_PLATFORM_TEXT = 300;

/** Values shorter than this are never searched for (a two-letter name would cut words of the message). */
const MIN_SENT_LENGTH = 3;

/**
 * An email address, or what is left of one (no top-level domain needed); also URL-encoded (`%40`). A match starts only
 * where a run of local-part characters starts (the lookbehind): tried from inside a run too, a long run with no `@`
 * after it cost time quadratic in its length (50,000 characters: 6 s of the event loop), and a run's start finds every
 * address a later start would.
 */
const EMAIL = /(?<![\w.!#$%&'*+=?^`{|}~-])[\w.!#$%&'*+=?^`{|}~-]+(?:@|%40)[\w-]+(?:\.[\w-]+)*/gi;
/** A run of 32 or more hex digits: a SHA-256 (64) or MD5 (32) hash, a hex click id. */
const HEX_RUN = /[0-9a-f]{32,}/gi;
/** A run of id-like characters long enough to be opaque (a click id, a token, a base64 hash). */
const ID_RUN = /[A-Za-z0-9_\-+=~]{24,}/g;
/** An IPv4 address. */
const IPV4 = /(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])/g;
/** A phone number in international form (a `+`, then at least eight digits, spaces or separators). */
const PHONE = /\+\d[\d\s().-]{6,}\d/g;

/**
 * A part of a long id-like run that reads as a word: an upper-case code word (`DESTINATION`), a lower- or camel-case
 * word (`conversionHappenedAt`, `OfflineConversionNameInvalid`), or a short number.
 */
const WORD = /^(?:[A-Z]{1,20}|(?:[a-z]{1,20}|[A-Z][a-z]{1,20})(?:[A-Z][a-z]{0,20})*|\d{1,10})$/;

/** A long id-like run stays when it reads as words (`DESTINATION_ACCOUNT_NOT_ENABLED_…`); else it is opaque (an id, a token). */
function opaque(run: string): string {
  return run.split(/[_-]+/).every((part) => part === '' || WORD.test(part)) ? run : REMOVED;
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Removes every occurrence of the given values (any case, not inside a longer word), longest first. */
function removeValues(text: string, values: readonly string[]): string {
  let out = text;
  let lower = out.toLowerCase();
  for (const value of values) {
    if (!lower.includes(value.toLowerCase())) continue;
    const pattern = new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(value)}(?![A-Za-z0-9])`, 'gi');
    out = out.replace(pattern, REMOVED);
    lower = out.toLowerCase();
  }
  return out;
}

/** Cuts out what identifies a person in any text: emails, long hex runs, opaque ids, IPv4 addresses, phone numbers. */
function removePatterns(text: string): string {
  return text.replace(EMAIL, REMOVED).replace(HEX_RUN, REMOVED).replace(ID_RUN, opaque).replace(IPV4, REMOVED).replace(PHONE, REMOVED);
}

/** Distinct values to search for, longest first (so a value is removed whole before a shorter one inside it). */
function prepared(values: Iterable<string>): string[] {
  const set = new Set<string>();
  for (const value of values) {
    const trimmed = value.trim();
    if (trimmed.length >= MIN_SENT_LENGTH) set.add(trimmed.toLowerCase());
  }
  return [...set].sort((a, b) => b.length - a.length);
}

/**
 * A platform's words as cnv may keep them: one line, without what identifies a person (and without `sent`, values cnv
 * sent), at most `max` characters (cut after cleaning, so half a value is never left behind).
 */
export function platformText(raw: string, max = MAX_PLATFORM_TEXT, sent: readonly string[] = []): string {
  const secrets = secretsOfCallsInFlight();
  return cleanText(raw, max, prepared(secrets.length > 0 ? [...sent, ...secrets] : sent));
}

/**
 * The secrets of the connections whose platform calls (cleanPlatform) are running now, one entry a call. Every
 * `platformText` removes them first, from the platform's raw words: before the patterns (which would cut a token's
 * long run and leave its short parts, `[removed]|tail.x9`, that cleanPlatform's second pass no longer finds whole)
 * and before the text is shortened (a token cut in half is not found whole either).
 *
 * Every call's, not only the call's own: a call's entry is there from its start to its end, so whatever its
 * platformText quotes meanwhile loses its secrets; another call's tokens removed besides cost nothing (they are opaque
 * credentials, not words of the message). An AsyncLocalStorage kept each call's own, but on Node 20 its first `run`
 * turns on async hooks for the life of the process: every promise and tick then runs the hooks (a promise-heavy
 * Fastify route driven by inject: 1.5 times the CPU; the webhook benchmark: no difference beyond its noise, the hooks
 * about 2 % of the HTTP thread's profile; docs/benchmarks.md).
 */
const callsInFlight = new Set<{ secrets: () => string[] }>();

function secretsOfCallsInFlight(): string[] {
  if (callsInFlight.size === 0) return [];
  const all: string[] = [];
  for (const call of callsInFlight) all.push(...call.secrets());
  return all;
}

/**
 * Runs a platform call with the connection's secrets in scope. An error it throws (a parse error quoting the answer, an
 * adapter's fault) becomes the event's `adapter_error` and a log line: the secrets are removed from its message and
 * stack too (nothing else: the rest is cnv's own words, kept for whoever debugs it).
 */
async function withSecretsInScope<T>(secrets: () => string[], call: () => Promise<T>): Promise<T> {
  const inFlight = { secrets };
  callsInFlight.add(inFlight);
  try {
    return await call();
  } catch (error) {
    if (error instanceof Error) {
      const values = prepared(secrets());
      error.message = removeValues(error.message, values);
      if (error.stack !== undefined) error.stack = removeValues(error.stack, values);
    }
    throw error;
  } finally {
    callsInFlight.delete(inFlight);
  }
}

/** platformText with the sent values already prepared (a batch prepares them once for all its errors). */
function cleanText(raw: string, max: number, values: readonly string[]): string {
  const cleaned = removePatterns(removeValues(raw.replace(/\s+/g, ' ').trim(), values));
  return cleaned.length > max ? `${cleaned.slice(0, max)}…` : cleaned;
}

/**
 * Every value cnv may have sent for one conversion, in the forms a platform may quote it: identity fields as given,
 * trimmed and lower-cased (a phone also as its digits and `+` digits), the customer id, click ids, cookies, IP address,
 * user agent and page address. Hashes of them are long hex runs, which `platformText` removes anyway.
 */
export function sentValues(input: DeliveryInput): string[] {
  const values: string[] = [];
  for (const [field, raw] of Object.entries(input.identity)) {
    if (typeof raw !== 'string') continue;
    values.push(raw, raw.replace(/\s+/g, ''));
    if (field === 'phone') {
      const digits = raw.replace(/\D/g, '');
      values.push(digits, `+${digits}`, digits.replace(/^00/, ''));
    }
  }
  for (const value of [input.customerId, input.ipAddress, input.userAgent, input.pageUrl, pageUrlForPlatform(input.pageUrl)]) if (value) values.push(value);
  values.push(...Object.values(input.clickIds), ...Object.values(input.cookies));
  return values.filter((v): v is string => typeof v === 'string');
}

/** A delivery error with its message and hint cleaned (the code and status are cnv's or numeric). */
export function cleanError(error: DeliveryError, sent: readonly string[] = []): DeliveryError {
  return cleanErrorWith(error, prepared(sent));
}

function cleanErrorWith(error: DeliveryError, values: readonly string[]): DeliveryError {
  const message = cleanText(error.message, Number.MAX_SAFE_INTEGER, values);
  const hint = error.hint === undefined ? undefined : cleanText(error.hint, Number.MAX_SAFE_INTEGER, values);
  return { ...error, message, ...(hint === undefined ? {} : { hint }) };
}

/** Cleans errors of a batch (`values` prepared); an error shared by many outcomes (a refused request) is cleaned once. */
function errorCleaner(values: readonly string[]): (error: DeliveryError) => DeliveryError {
  const done = new Map<DeliveryError, DeliveryError>();
  return (error) => {
    let clean = done.get(error);
    if (!clean) {
      clean = cleanErrorWith(error, values);
      done.set(error, clean);
    }
    return clean;
  };
}

function cleanOutcome<O extends DeliveryOutcome | AdjustmentOutcome>(outcome: O, clean: (error: DeliveryError) => DeliveryError, values: readonly string[]): O {
  if ('error' in outcome) return { ...outcome, error: clean(outcome.error) };
  if (outcome.kind === 'skipped') return { ...outcome, reason: clean(outcome.reason) };
  if (outcome.kind === 'unsupported') return { ...outcome, reason: cleanText(outcome.reason, Number.MAX_SAFE_INTEGER, values) };
  return outcome;
}

function cleanTest(result: ConnectionTestResult, secrets: readonly string[]): ConnectionTestResult {
  if (result.ok) return result;
  const values = prepared(secrets);
  return {
    ...result,
    message: cleanText(result.message, Number.MAX_SAFE_INTEGER, values),
    ...(result.error ? { error: cleanErrorWith(result.error, values) } : {}),
  };
}

/** Credentials that are not secret (what a grant covers): kept in messages, which may name them. */
const NOT_SECRET = new Set([GRANTED_SCOPE_CREDENTIAL, OAUTH_CLIENT_CREDENTIAL]);

/**
 * The send context with its secrets collected: the connection's credentials (a pasted token, a refresh token, a
 * developer token), the service's developer tokens sent with every call (Google Ads, Microsoft Advertising) and every
 * access token the send is given. A platform may quote them in its error (a token refused with its value; a token
 * with `|` or `.` in it is not one opaque run the patterns catch), so they are removed too. Read when asked: a refresh
 * token the platform rotates during the call replaces the old one in the credentials, and both are removed.
 */
function withSecrets<C extends Pick<SendContext, 'connection' | 'accessToken'>>(ctx: C): { ctx: C; secrets: () => string[] } {
  const seen: string[] = [];
  const accessToken = async () => {
    const token = await ctx.accessToken();
    seen.push(token);
    return token;
  };
  const settings = (ctx as Partial<SendContext>).settings;
  const service = [settings?.googleAdsDeveloperToken, settings?.microsoft?.developerToken].filter((v): v is string => typeof v === 'string');
  const secrets = () => {
    for (const [key, value] of Object.entries(ctx.connection.credentials)) {
      if (!NOT_SECRET.has(key) && typeof value === 'string' && !seen.includes(value)) seen.push(value);
    }
    return [...seen, ...service];
  };
  secrets(); // the credentials as the call starts, before a rotation replaces one
  return { ctx: { ...ctx, accessToken }, secrets };
}

/**
 * The platform with every error it returns cleaned: conversion sends and adjustments (with every value sent in the
 * batch removed, since a refused request's message may quote any of its events), connection tests and diagnoses.
 */
export function cleanPlatform(platform: DestinationPlatform): DestinationPlatform {
  const { adjustBatch, diagnose } = platform;
  return {
    ...platform,
    async sendBatch(inputs, sendCtx) {
      const { ctx, secrets } = withSecrets(sendCtx);
      const outcomes = await withSecretsInScope(secrets, () => platform.sendBatch(inputs, ctx));
      if (outcomes.every((outcome) => outcome.kind === 'delivered')) return outcomes;
      const sent = prepared([...inputs.flatMap(sentValues), ...secrets()]);
      const clean = errorCleaner(sent);
      return outcomes.map((outcome) => cleanOutcome(outcome, clean, sent));
    },
    async testConnection(sendCtx) {
      const { ctx, secrets } = withSecrets(sendCtx);
      return cleanTest(await withSecretsInScope(secrets, () => platform.testConnection(ctx)), secrets());
    },
    ...(adjustBatch
      ? {
          async adjustBatch(inputs: readonly AdjustmentInput[], sendCtx) {
            const { ctx, secrets } = withSecrets(sendCtx);
            const outcomes = await withSecretsInScope(secrets, () => adjustBatch(inputs, ctx));
            if (outcomes.every((outcome) => outcome.kind === 'adjusted')) return outcomes;
            const sent = prepared([...inputs.flatMap((input) => sentValues(input.original)), ...secrets()]);
            const clean = errorCleaner(sent);
            return outcomes.map((outcome) => cleanOutcome(outcome, clean, sent));
          },
        }
      : {}),
    ...(diagnose
      ? {
          async diagnose(requestId: string, sendCtx) {
            const { ctx, secrets } = withSecrets(sendCtx);
            const diagnosis: Diagnosis = await withSecretsInScope(secrets, () => diagnose(requestId, ctx));
            return diagnosis.ok ? diagnosis : { ok: false, error: cleanError(diagnosis.error, secrets()) };
          },
        }
      : {}),
  };
}
