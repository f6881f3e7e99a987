/** Validation of a webhook report body, after its signature has been verified over the raw bytes. */
import { isCorrelationToken } from '../../protocol/cookies';
import { CUSTOMER_EVENT_ID_MAX, IDENTITY_VALUE_MAX, exceedsCharacters, type SaasSignupReport } from '../../protocol/webhook';
import { isWellFormedText, parseJsonText, utf8Text } from '../http/json-text';
import { ApiError, invalidParam, missingParam } from '../http/errors';
import { bodyChecker } from '../http/body-check';
import { SignupValueBody, checkValueRules, refuseCurrencyCase } from './schemas';

const IDENTITY_FIELDS = ['email', 'phone', 'first_name', 'last_name'] as const;

/** A validated report: identity fields present only when they hold a non-blank string. */
export interface ValidReport {
  customer_event_id: string;
  correlation_token: string | null;
  identity: Partial<Record<(typeof IDENTITY_FIELDS)[number], string>>;
  allow_uncorrelated: boolean;
  /** The conversion's value with its currency (both or neither), and the customer it belongs to. */
  value?: number | null;
  currency?: string | null;
  customer_id?: string | null;
}

const checkSignupValues = bodyChecker(SignupValueBody);

/** The value fields of a body: checked by the schema, then by the rules it cannot say. */
export function validateValueFields(body: Record<string, unknown>): { value: number | null; currency: string | null; customer_id: string | null } {
  refuseCurrencyCase(body);
  const fields = checkSignupValues(body);
  const { value, currency } = checkValueRules(fields);
  refuseMalformedText(fields.customer_id, 'customer_id');
  return { value, currency, customer_id: fields.customer_id ?? null };
}

/** Parses the raw body (UTF-8 JSON) of a report; throws a 400 ApiError naming the first fault. Unknown fields are ignored. */
export function parseReportBody(raw: Buffer): ValidReport {
  // Unknown fields are ignored, so only the fields read below are checked for unpaired surrogates.
  const value = parseJsonText(utf8Text(raw, 'The body'), { what: 'The body', protoKeys: 'drop', unpairedSurrogates: 'keep' });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', 'The body must be a JSON object.');
  }
  return validateReport(value as Record<string, unknown>);
}

/**
 * 400 for a field holding an unpaired UTF-16 surrogate (`"\ud800"`): PostgreSQL refuses it, and a 500 would be retried
 * by the client until it gave up, losing the conversion; a 400 tells the caller at once which field to fix.
 */
export function refuseMalformedText(value: unknown, field: string): void {
  if (typeof value === 'string' && !isWellFormedText(value)) {
    throw invalidParam(field, `${field} holds an unpaired UTF-16 surrogate (such as \\ud800), which is not text and cannot be stored.`);
  }
}

/** Checks the fields of a parsed report body. */
export function validateReport(body: Partial<Record<keyof SaasSignupReport, unknown>>): ValidReport {
  const id = body.customer_event_id;
  if (id === undefined || id === null) throw missingParam('customer_event_id');
  if (typeof id !== 'string' || id.trim() === '' || exceedsCharacters(id, CUSTOMER_EVENT_ID_MAX)) {
    throw invalidParam('customer_event_id', `customer_event_id must be a non-blank string of 1 to ${CUSTOMER_EVENT_ID_MAX} characters.`);
  }
  refuseMalformedText(id, 'customer_event_id');
  const token = body.correlation_token ?? null;
  if (token !== null && !isCorrelationToken(token)) {
    throw invalidParam(
      'correlation_token',
      'correlation_token must be the value of the cnv_signup_correlation cookie (22 base64url characters) or null.',
    );
  }
  const identity: ValidReport['identity'] = {};
  for (const field of IDENTITY_FIELDS) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || exceedsCharacters(value, IDENTITY_VALUE_MAX)) {
      throw invalidParam(field, `${field} must be a string of at most ${IDENTITY_VALUE_MAX} characters, or null.`);
    }
    refuseMalformedText(value, field);
    if (value.trim() !== '') identity[field] = value;
  }
  const allow = body.allow_uncorrelated;
  if (allow !== undefined && allow !== null && typeof allow !== 'boolean') {
    throw invalidParam('allow_uncorrelated', 'allow_uncorrelated must be a boolean.');
  }
  const values = validateValueFields(body);
  return { customer_event_id: id, correlation_token: token, identity, allow_uncorrelated: allow === true, ...values };
}
