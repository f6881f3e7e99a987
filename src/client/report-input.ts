/** The input of `reportSignup`, its checks, and the webhook request body built from it. */
import {
  exceedsCharacters,
  ADJUSTMENT_ID_MAX,
  CUSTOMER_EVENT_ID_MAX,
  CUSTOMER_ID_MAX,
  IDENTITY_VALUE_MAX,
  VALUE_MAX,
  VALUE_MAX_DECIMALS,
  WEBHOOK_MAX_BYTES,
  conversionValueOf,
  isConversionValue,
  isTriggerKey,
  type AdjustmentReport,
  type AdjustmentType,
  type ConversionReport,
  type SaasSignupReport,
} from '../protocol/webhook';
import { isCurrencyCode } from '../protocol/currencies';
import { ISO_TIMESTAMP } from '../protocol/timestamps';
import { cookieHeaderOf, type RequestLike } from './correlation';
import { meantName } from './names';

/** What the customer's backend knows about one signup. */
export interface ReportSignupInput {
  /** The incoming request of the signup (Node IncomingMessage, Fetch Request, or `{ headers: { cookie } }`): its cookie is read. */
  request?: RequestLike;
  /** A raw Cookie header, when there is no request object at hand. */
  cookieHeader?: string | readonly string[] | null;
  /** The token itself, when stored elsewhere; takes precedence over `request` and `cookieHeader` (null: there is none). */
  correlationToken?: string | null;
  /** Your stable id of this conversion (1 to 200 characters), e.g. the new user's id. The service dedupes on it. */
  customerEventId: string;
  /** Raw, never pre-hashed: the service normalises and hashes per destination. */
  email?: string | null;
  phone?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  /** Send even without a correlation token (no click id: much weaker matching). Default false. */
  allowUncorrelated?: boolean;
  /** What the signup is worth (0 to 1e9, at most 6 decimals; float noise past them is rounded away before sending). */
  value?: number | null;
  /** Its ISO 4217 currency, required with a value; three letters in any case ('eur' is sent as 'EUR'). */
  currency?: string | null;
  /** Your stable id of the customer or account: later stages (reportConversion) find this signup's click by it. */
  customerId?: string | null;
}

/** A later stage of a customer (a trial, a qualified lead, a payment, a renewal). */
export interface ReportConversionInput extends Omit<ReportSignupInput, 'customerId'> {
  /** Required: the same customer id the signup was reported with; the service finds the ad click through it. */
  customerId: string;
  /** When the stage happened (a Date, or an ISO 8601 date-time with its time zone), at most 90 days ago; default now. */
  occurredAt?: Date | string | null;
}

/** A restatement (new total value) or retraction (refund, cancellation, spam lead) of a reported conversion. */
export interface AdjustConversionInput {
  /** Your stable id of this adjustment (1 to 200 characters): a repeat is applied once. */
  adjustmentId: string;
  /** The customerEventId of the report to adjust. */
  customerEventId: string;
  type: AdjustmentType;
  /** Restate: the new total value, with its currency. */
  value?: number | null;
  currency?: string | null;
  /**
   * When the adjustment happened (a Date, or an ISO 8601 date-time with its time zone); default now. Pass your billing
   * system's event time: a restatement dated before the restatement its conversion stands at (its events delivered
   * out of order) is recorded but superseded, never sent and never the conversion's value.
   */
  occurredAt?: Date | string | null;
}

/** A problem with one input field, found before anything is sent. */
export interface InputProblem {
  param: string;
  message: string;
}

/** The fields of each input: any other key is refused before sending (a misspelled one would be dropped silently). */
export const SIGNUP_FIELDS: readonly (keyof ReportSignupInput)[] = [
  'request', 'cookieHeader', 'correlationToken', 'customerEventId', 'email', 'phone', 'firstName', 'lastName', 'allowUncorrelated',
  'value', 'currency', 'customerId',
];
const CONVERSION_FIELDS: readonly (keyof ReportConversionInput)[] = [...SIGNUP_FIELDS, 'occurredAt'];
const ADJUSTMENT_FIELDS: readonly (keyof AdjustConversionInput)[] = ['adjustmentId', 'customerEventId', 'type', 'value', 'currency', 'occurredAt'];

/** The first key of an input that is none of its fields, named with the field it likely meant; null when there is none. */
export function unknownField(input: object, fields: readonly string[], method: string): InputProblem | null {
  for (const key of Object.keys(input)) {
    if (fields.includes(key)) continue;
    const meant = meantName(key, fields);
    const hint = meant ? `did you mean ${meant}?` : `its fields are ${fields.join(', ')}.`;
    return { param: key, message: `${key} is not a field of ${method}'s input: ${hint} Nothing was sent.` };
  }
  return null;
}

const IDENTITY_FIELDS = [
  ['email', 'email'],
  ['phone', 'phone'],
  ['firstName', 'first_name'],
  ['lastName', 'last_name'],
] as const;

/** Checks the fields of an input that do not depend on the token; null when all are fine. */
export function checkInput(input: Omit<ReportSignupInput, 'customerId'> & { customerId?: string | null }): InputProblem | null {
  const id: unknown = input.customerEventId;
  // Blank (only white space) is refused as the service refuses it: sent, it would only come back as a 400.
  if (typeof id !== 'string' || id.trim() === '' || exceedsCharacters(id, CUSTOMER_EVENT_ID_MAX)) {
    return {
      param: 'customerEventId',
      message: `customerEventId must be a non-blank string of 1 to ${CUSTOMER_EVENT_ID_MAX} characters (got ${describe(id)}).`,
    };
  }
  for (const [field] of IDENTITY_FIELDS) {
    const value: unknown = input[field];
    if (value !== undefined && value !== null && (typeof value !== 'string' || exceedsCharacters(value, IDENTITY_VALUE_MAX))) {
      return { param: field, message: `${field} must be a string of at most ${IDENTITY_VALUE_MAX} characters, or null (got ${describe(value)}).` };
    }
  }
  const source = checkTokenSources(input);
  if (source) return source;
  const allow: unknown = input.allowUncorrelated;
  if (allow !== undefined && typeof allow !== 'boolean') {
    return { param: 'allowUncorrelated', message: `allowUncorrelated must be a boolean (got ${describe(allow)}).` };
  }
  return checkValue(input) ?? checkCustomerId(input.customerId, false);
}

/**
 * Where the token comes from, checked for untyped callers: `correlationToken` a string or null, `cookieHeader` a string,
 * strings or null, `request` an object with headers whose cookie header is one of those.
 */
function checkTokenSources(input: Pick<ReportSignupInput, 'correlationToken' | 'cookieHeader' | 'request'>): InputProblem | null {
  const token: unknown = input.correlationToken;
  if (token !== undefined && token !== null && typeof token !== 'string') {
    return { param: 'correlationToken', message: `correlationToken must be a string or null (got ${describe(token)}).` };
  }
  const header: unknown = input.cookieHeader;
  if (!isCookieHeader(header)) {
    return { param: 'cookieHeader', message: `cookieHeader must be the Cookie header: a string, an array of strings, or null (got ${describe(header)}).` };
  }
  const request: unknown = input.request;
  if (request === undefined || request === null) return null;
  const headers: unknown = typeof request === 'object' ? (request as { headers?: unknown }).headers : undefined;
  if (!headers || typeof headers !== 'object') {
    return { param: 'request', message: `request must be a request with headers (Node IncomingMessage, Fetch Request or { headers: { cookie } }) (got ${describe(request)}).` };
  }
  const cookie: unknown = cookieHeaderOf(request as RequestLike);
  if (!isCookieHeader(cookie)) {
    return { param: 'request', message: `request's cookie header must be a string or strings (got ${describe(cookie)}).` };
  }
  return null;
}

function isCookieHeader(value: unknown): boolean {
  if (value === undefined || value === null || typeof value === 'string') return true;
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/**
 * A currency as the service takes it: three ASCII letters upper-cased ('eur', as Stripe writes it, is sent as 'EUR');
 * anything else as given, for checkValue to refuse.
 */
export function currencyToSend<T>(currency: T): T | string {
  return typeof currency === 'string' && /^[A-Za-z]{3}$/.test(currency) ? currency.toUpperCase() : currency;
}

/** A value as sent: rounded to 6 decimals when float noise is all that is past them (conversionValueOf), else as given. */
function valueToSend(value: number): number {
  return conversionValueOf(value) ?? value;
}

/**
 * value and currency: both or neither; the value 0 to 1e9 with at most 6 decimals (float noise aside, as the service
 * counts them), the currency the ISO 4217 code of a current currency (protocol/currencies.ts; in any case: it is sent upper-cased).
 */
export function checkValue(input: { value?: number | null; currency?: string | null }): InputProblem | null {
  const value: unknown = input.value;
  const currency: unknown = currencyToSend(input.currency);
  if (value !== undefined && value !== null && !isConversionValue(value)) {
    return { param: 'value', message: `value must be a number from 0 to ${VALUE_MAX} with at most ${VALUE_MAX_DECIMALS} decimals (got ${describe(value)}).` };
  }
  if (currency !== undefined && currency !== null && !isCurrencyCode(currency)) {
    return { param: 'currency', message: `currency must be the ISO 4217 code of a current currency, such as "EUR" (got ${describe(currency)}).` };
  }
  if (value !== undefined && value !== null && (currency === undefined || currency === null)) {
    return { param: 'currency', message: 'currency is required with a value (an ISO 4217 code such as "EUR").' };
  }
  return null;
}

function checkCustomerId(value: unknown, required: boolean): InputProblem | null {
  if ((value === undefined || value === null) && !required) return null;
  if (typeof value !== 'string' || value.trim() === '' || exceedsCharacters(value, CUSTOMER_ID_MAX)) {
    return { param: 'customerId', message: `customerId must be a non-blank string of 1 to ${CUSTOMER_ID_MAX} characters (got ${describe(value)}).` };
  }
  return null;
}

function isoOf(value: Date | string | null | undefined): string | null | InputProblem {
  if (value === undefined || value === null) return null;
  const problem: InputProblem = {
    param: 'occurredAt',
    message: 'occurredAt must be a Date or an ISO 8601 date-time with a time zone, such as 2026-11-21T09:30:00Z (without one, the time would be read in this machine\'s time zone). Nothing was sent.',
  };
  // A string without its zone is refused, as the service refuses it: `new Date` would read it in this machine's zone.
  if (typeof value === 'string' && !ISO_TIMESTAMP.test(value)) return problem;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return problem;
  return date.toISOString();
}

/** Checks a later stage's input and builds its body (the token as found: the service also finds the click by customerId). */
export function conversionBody(stageKey: string, input: ReportConversionInput, token: string | null): { body: ConversionReport } | InputProblem {
  if (!isTriggerKey(stageKey)) return { param: 'stageKey', message: 'stageKey must be the trigger key of a conversion flow: 1 to 64 characters from [A-Za-z0-9_-].' };
  const unknown = unknownField(input, CONVERSION_FIELDS, 'reportConversion');
  if (unknown) return unknown;
  const problem = checkInput({ ...input, customerId: input.customerId }) ?? checkCustomerId(input.customerId, true);
  if (problem) return problem;
  const occurredAt = isoOf(input.occurredAt);
  if (occurredAt !== null && typeof occurredAt === 'object') return occurredAt;
  return {
    body: {
      ...reportBody(input, token),
      customer_id: input.customerId,
      ...(occurredAt ? { occurred_at: occurredAt } : {}),
    } as ConversionReport,
  };
}

/** Checks an adjustment's input and builds its body. */
export function adjustmentBody(input: AdjustConversionInput): { body: AdjustmentReport } | InputProblem {
  const unknown = unknownField(input, ADJUSTMENT_FIELDS, 'adjustConversion');
  if (unknown) return unknown;
  for (const [field, max] of [['adjustmentId', ADJUSTMENT_ID_MAX], ['customerEventId', CUSTOMER_EVENT_ID_MAX]] as const) {
    const value: unknown = input[field];
    if (typeof value !== 'string' || value.trim() === '' || exceedsCharacters(value, max)) {
      return { param: field, message: `${field} must be a non-blank string of 1 to ${max} characters (got ${describe(value)}).` };
    }
  }
  if (input.type !== 'restate' && input.type !== 'retract') return { param: 'type', message: "type must be 'restate' or 'retract'." };
  const problem = checkValue(input);
  if (problem) return problem;
  if (input.type === 'restate' && (input.value === undefined || input.value === null)) return { param: 'value', message: 'A restatement needs the new value (and its currency).' };
  if (input.type === 'retract' && input.value !== undefined && input.value !== null) return { param: 'value', message: 'A retraction takes the whole conversion back: leave value out.' };
  const occurredAt = isoOf(input.occurredAt);
  if (occurredAt !== null && typeof occurredAt === 'object') return occurredAt;
  return {
    body: {
      adjustment_id: input.adjustmentId,
      customer_event_id: input.customerEventId,
      type: input.type,
      ...(input.type === 'restate' ? { value: valueToSend(input.value!), currency: currencyToSend(input.currency!) } : {}),
      ...(occurredAt ? { occurred_at: occurredAt } : {}),
    },
  };
}

/** The webhook request body for a checked input and the token to send (null only when uncorrelated is allowed). */
export function reportBody(input: Omit<ReportSignupInput, 'customerId'> & { customerId?: string | null }, token: string | null): SaasSignupReport {
  return {
    correlation_token: token,
    customer_event_id: input.customerEventId,
    email: input.email ?? null,
    phone: input.phone ?? null,
    first_name: input.firstName ?? null,
    last_name: input.lastName ?? null,
    allow_uncorrelated: input.allowUncorrelated === true,
    ...(input.value !== undefined && input.value !== null ? { value: valueToSend(input.value), currency: currencyToSend(input.currency ?? null) } : {}),
    ...('customerId' in input && input.customerId ? { customer_id: input.customerId } : {}),
  };
}

/** Serialises a body once into the exact bytes that are signed and sent; a problem when it is over the size limit. */
export function encodeBody(body: SaasSignupReport | ConversionReport | AdjustmentReport): { bytes: Uint8Array<ArrayBuffer> } | InputProblem {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  if (bytes.length > WEBHOOK_MAX_BYTES) {
    return { param: 'body', message: `The report is ${bytes.length} bytes, over the ${WEBHOOK_MAX_BYTES} byte limit.` };
  }
  return { bytes };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `a string of ${[...value].length} characters`;
  if (Array.isArray(value)) return 'an array';
  return value === null ? 'null' : typeof value;
}
