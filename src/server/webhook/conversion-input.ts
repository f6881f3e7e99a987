/**
 * Validation of the bodies of a later stage's report and of an adjustment, after the signature has been verified over
 * the raw bytes: the TypeBox schemas of schemas.ts, then the rules a schema cannot say (at most 6 decimals, a real
 * currency, occurred_at within 90 days, no unpaired surrogates). Unknown fields are ignored.
 */
import { OCCURRED_AT_MAX_AGE_DAYS, type AdjustmentType } from '../../protocol/webhook';
import { parseJsonText, utf8Text } from '../http/json-text';
import { ApiError, invalidParam } from '../http/errors';
import { isStorableTimestamp } from '../http/timestamps';
import { bodyChecker } from '../http/body-check';
import { AdjustmentBody, ConversionBody, checkValueRules, refuseCurrencyCase } from './schemas';
import { refuseMalformedText, type ValidReport } from './report-input';

const DAY_MS = 86_400_000;

/** A later stage's time may be this far ahead of the service's clock (the reporter's clock skew), not more. */
export const OCCURRED_AT_FUTURE_SKEW_MS = 5 * 60_000;

/** A validated later stage: a report like a signup's, with its customer id required and its own time. */
export interface ValidConversion extends ValidReport {
  customer_id: string;
  /** When the stage happened: the body's occurred_at, or null for "when received". */
  occurred_at: Date | null;
}

/** A validated adjustment. */
export interface ValidAdjustment {
  adjustment_id: string;
  customer_event_id: string;
  type: AdjustmentType;
  value: number | null;
  currency: string | null;
  occurred_at: Date | null;
}

/** The raw body as a JSON object, or the 400 that says it is not one. */
export function parseBodyObject(raw: Buffer): Record<string, unknown> {
  const value = parseJsonText(utf8Text(raw, 'The body'), { what: 'The body', protoKeys: 'drop', unpairedSurrogates: 'keep' });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', 'The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

/**
 * An occurred_at: null when absent; else an ISO 8601 date-time with a time zone, at most 90 days before `now` and
 * not ahead of it beyond clock skew. Throws the 400 naming the field.
 */
export function checkOccurredAt(value: string | null | undefined, now: Date, param = 'occurred_at'): Date | null {
  if (value === undefined || value === null) return null;
  if (!isStorableTimestamp(value)) {
    throw invalidParam(param, `Invalid parameter '${param}': it must be an ISO 8601 date-time with a time zone, such as 2026-11-21T09:30:00Z.`);
  }
  const at = new Date(value);
  if (now.getTime() - at.getTime() > OCCURRED_AT_MAX_AGE_DAYS * DAY_MS) {
    throw invalidParam(param, `Invalid parameter '${param}': it is more than ${OCCURRED_AT_MAX_AGE_DAYS} days ago; ad platforms take conversions of the last 90 days at most.`);
  }
  if (at.getTime() - now.getTime() > OCCURRED_AT_FUTURE_SKEW_MS) {
    throw invalidParam(param, `Invalid parameter '${param}': it is in the future; check the clock of the system that reports.`);
  }
  return at;
}

const checkConversion = bodyChecker(ConversionBody);
const checkAdjustment = bodyChecker(AdjustmentBody);

const IDENTITY = ['email', 'phone', 'first_name', 'last_name'] as const;

/** Checks a later stage's body (parsed JSON) at `now`; throws the 400 of the first fault. */
export function validateConversion(body: Record<string, unknown>, now: Date): ValidConversion {
  refuseCurrencyCase(body);
  const fields = checkConversion(body);
  const { value, currency } = checkValueRules(fields);
  for (const name of ['customer_event_id', 'customer_id', ...IDENTITY] as const) refuseMalformedText(fields[name], name);
  const occurredAt = checkOccurredAt(fields.occurred_at, now);
  const identity: ValidReport['identity'] = {};
  for (const name of IDENTITY) {
    const text = fields[name];
    if (typeof text === 'string' && text.trim() !== '') identity[name] = text;
  }
  return {
    customer_event_id: fields.customer_event_id,
    correlation_token: fields.correlation_token ?? null,
    identity,
    allow_uncorrelated: fields.allow_uncorrelated === true,
    value,
    currency,
    customer_id: fields.customer_id,
    occurred_at: occurredAt,
  };
}

/** Checks an adjustment's body (parsed JSON) at `now`; throws the 400 of the first fault. */
export function validateAdjustment(body: Record<string, unknown>, now: Date): ValidAdjustment {
  refuseCurrencyCase(body);
  const fields = checkAdjustment(body);
  const { value, currency } = checkValueRules(fields);
  refuseMalformedText(fields.adjustment_id, 'adjustment_id');
  refuseMalformedText(fields.customer_event_id, 'customer_event_id');
  if (fields.type === 'restate' && value === null) {
    throw invalidParam('value', "Missing parameter value: a restatement ('restate') gives the conversion's new total value.", 'parameter_missing');
  }
  if (fields.type === 'retract' && value !== null) {
    throw invalidParam('value', "A retraction ('retract') takes the whole conversion back and carries no value; leave value out.");
  }
  return {
    adjustment_id: fields.adjustment_id,
    customer_event_id: fields.customer_event_id,
    type: fields.type,
    value,
    currency,
    occurred_at: checkOccurredAt(fields.occurred_at, now),
  };
}
