/** `createCnvClient`: reads the token, checks the input, signs and sends the report with retries. */
import { sendAttempt, type TransientFailure } from './attempt';
import { retryDelayMs } from './backoff';
import { cookieHeaderOf, lookupCorrelationToken, type CorrelationLookup } from './correlation';
import { resolveOptions, type CnvClientOptions, type ResolvedOptions } from './options';
import {
  adjustmentBody,
  checkInput,
  conversionBody,
  encodeBody,
  reportBody,
  SIGNUP_FIELDS,
  unknownField,
  type AdjustConversionInput,
  type ReportConversionInput,
  type ReportSignupInput,
} from './report-input';
import { adjustmentPath, conversionPath } from '../protocol/webhook';
import type { AdjustConversionResult, ReportConversionResult, ReportSignupResult } from './result';
import { describeRejection } from './service-error';
import { isCorrelationToken } from '../protocol/cookies';

export interface CnvClient {
  /**
   * Reports one signup through the signed webhook. Resolves to a result for every expected outcome
   * (delivered, not sent, rejected, gave up); never rejects for those.
   */
  reportSignup(input: ReportSignupInput): Promise<ReportSignupResult>;
  /**
   * Reports a later stage of a customer (its flow's trigger `{type: 'conversion', key: stageKey}`): a trial, a
   * qualified lead, a payment, a renewal. Sent with or without a correlation token: the service finds the ad click
   * through the signup reported with the same customerId. Same signing, retries and dedupe as reportSignup.
   */
  reportConversion(stageKey: string, input: ReportConversionInput): Promise<ReportConversionResult>;
  /** Restates (new total value) or retracts a reported conversion. Same signing, retries; deduped on adjustmentId. */
  adjustConversion(input: AdjustConversionInput): Promise<AdjustConversionResult>;
}

/** A client for one site's API trigger. Throws CnvConfigError on invalid options. */
export function createCnvClient(options: CnvClientOptions): CnvClient {
  const config = resolveOptions(options);
  return {
    reportSignup: (input) => reportSignup(config, input),
    reportConversion: (stageKey, input) => reportConversion(config, stageKey, input),
    adjustConversion: (input) => adjustConversion(config, input),
  };
}

async function reportConversion(config: ResolvedOptions, stageKey: string, input: ReportConversionInput): Promise<ReportConversionResult> {
  if (!input || typeof input !== 'object') throw new TypeError('reportConversion needs an input object.');
  const lookup = findToken(input);
  const built = conversionBody(stageKey, input, lookup.token);
  if (!('body' in built)) return { ok: false, sent: false, reason: 'invalid_input', ...built };
  const encoded = encodeBody(built.body);
  if (!('bytes' in encoded)) return { ok: false, sent: false, reason: 'invalid_input', ...encoded };
  return send(config, encoded.bytes, lookup, conversionPath(config.siteKey, stageKey)) as Promise<ReportConversionResult>;
}

async function adjustConversion(config: ResolvedOptions, input: AdjustConversionInput): Promise<AdjustConversionResult> {
  if (!input || typeof input !== 'object') throw new TypeError('adjustConversion needs an input object.');
  const built = adjustmentBody(input);
  if (!('body' in built)) return { ok: false, sent: false, reason: 'invalid_input', ...built };
  const encoded = encodeBody(built.body);
  if (!('bytes' in encoded)) return { ok: false, sent: false, reason: 'invalid_input', ...encoded };
  // An adjustment carries no correlation token, so none is missing either (tokenProblem null).
  return send(config, encoded.bytes, NO_TOKEN_NEEDED, adjustmentPath(config.siteKey), 'adjustmentId') as Promise<AdjustConversionResult>;
}

/** The token lookup of a request that takes no token (an adjustment). */
const NO_TOKEN_NEEDED = { token: null, problem: null } as const;

async function reportSignup(config: ResolvedOptions, input: ReportSignupInput): Promise<ReportSignupResult> {
  if (!input || typeof input !== 'object') throw new TypeError('reportSignup needs an input object.');
  const problem = unknownField(input, SIGNUP_FIELDS, 'reportSignup') ?? checkInput(input);
  if (problem) return { ok: false, sent: false, reason: 'invalid_input', ...problem };

  const lookup = findToken(input);
  if (lookup.token === null && input.allowUncorrelated !== true) {
    return {
      ok: false,
      sent: false,
      reason: 'no_correlation_token',
      tokenProblem: lookup.problem,
      message:
        lookup.problem === 'malformed'
          ? 'The correlation cookie holds no valid token, so nothing was sent (pass allowUncorrelated: true to send anyway).'
          : 'No correlation token (the visitor did not pass the loader, or the cookie expired), so nothing was sent ' +
            '(pass allowUncorrelated: true to send anyway, at much weaker match quality).',
    };
  }

  const encoded = encodeBody(reportBody(input, lookup.token));
  if (!('bytes' in encoded)) return { ok: false, sent: false, reason: 'invalid_input', ...encoded };
  return send(config, encoded.bytes, lookup);
}

/** The explicit token first, then the Cookie header, then the request's cookies. */
function findToken(input: Pick<ReportSignupInput, 'correlationToken' | 'cookieHeader' | 'request'>): CorrelationLookup {
  if (input.correlationToken !== undefined) {
    if (input.correlationToken === null || input.correlationToken === '') return { token: null, problem: 'missing' };
    return isCorrelationToken(input.correlationToken)
      ? { token: input.correlationToken, problem: null }
      : { token: null, problem: 'malformed' };
  }
  if (input.cookieHeader !== undefined && input.cookieHeader !== null) return lookupCorrelationToken(input.cookieHeader);
  if (input.request) return lookupCorrelationToken(cookieHeaderOf(input.request));
  return { token: null, problem: 'missing' };
}

/**
 * Sends with retries. `dedupedOn`: the input field the service dedupes the request on, which makes sending it again
 * safe (a report's customerEventId, an adjustment's adjustmentId).
 */
async function send(
  config: ResolvedOptions,
  bytes: Uint8Array<ArrayBuffer>,
  lookup: CorrelationLookup | typeof NO_TOKEN_NEEDED,
  path: string = config.path,
  dedupedOn: 'customerEventId' | 'adjustmentId' = 'customerEventId',
): Promise<ReportSignupResult> {
  const fetchImpl = config.fetch ?? globalThis.fetch;
  let lastFailure: TransientFailure | null = null;
  for (let attempt = 1; attempt <= config.maxAttempts; attempt++) {
    const outcome = await sendAttempt({
      fetch: fetchImpl,
      url: config.origin + path,
      path,
      bytes,
      secret: config.secret,
      timeoutMs: config.timeoutMs,
      nowMs: config.now(),
    });
    switch (outcome.kind) {
      case 'delivered':
        return {
          ok: true,
          sent: true,
          response: outcome.response,
          attempts: attempt,
          correlationToken: lookup.token,
          tokenProblem: lookup.problem,
        };
      case 'rejected': {
        const redirected = outcome.httpStatus >= 300 && outcome.httpStatus < 400;
        return {
          ok: false,
          sent: true,
          reason: 'rejected',
          httpStatus: outcome.httpStatus,
          error: outcome.error,
          message: redirected
            ? `The webhook URL redirects (HTTP ${outcome.httpStatus} to ${outcome.location ?? '?'}); set webhookBaseUrl to the final host.`
            : describeRejection(outcome.httpStatus, outcome.error),
          attempts: attempt,
        };
      }
      case 'unexpected_response':
        return { ok: false, sent: true, reason: 'unexpected_response', httpStatus: outcome.httpStatus, message: outcome.message, attempts: attempt };
      case 'transient': {
        lastFailure = outcome.failure;
        if (attempt === config.maxAttempts) break;
        const delayMs = retryDelayMs(attempt, outcome.retryAfterMs, config, config.random);
        try {
          const returned: unknown = config.onRetry?.({ attempt, delayMs, failure: outcome.failure });
          // An async hook's rejection is ignored as well: left unhandled, it would end the process (Node's default).
          if (isThenable(returned)) returned.then(undefined, () => {});
        } catch {
          // The hook only observes (a log line): its failure must not end the retries nor reject the report.
        }
        await config.sleep(delayMs);
      }
    }
  }
  const failure = lastFailure as TransientFailure;
  return {
    ok: false,
    sent: true,
    reason: 'gave_up',
    lastFailure: failure,
    message: `Gave up after ${config.maxAttempts} attempt(s); last: ${describeFailure(failure)}. Safe to send again later with the same ${dedupedOn}: the service dedupes on it.`,
    attempts: config.maxAttempts,
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function describeFailure(failure: TransientFailure): string {
  switch (failure.kind) {
    case 'http':
      return `HTTP ${failure.httpStatus}${failure.error ? ` ${failure.error.code}: ${failure.error.message}` : ''}`;
    case 'timeout':
      return `no answer within ${failure.timeoutMs} ms`;
    case 'network':
      return `network error: ${failure.message}`;
  }
}
