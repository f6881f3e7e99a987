/**
 * The webhook bridge's bodies as TypeBox schemas: for its readers (the OpenAPI document: the report body and the
 * answer) and, for the value fields, later stages and adjustments, for checking (http/body-check.ts) after the
 * signature has been verified over the raw bytes. The rules a schema cannot say (at most 6 decimals, a real ISO 4217
 * currency, a currency with every value) follow in {@link checkValueRules}.
 */
import { Type } from '@sinclair/typebox';
import {
  ADJUSTMENT_ID_MAX,
  ADJUSTMENT_TYPES,
  CUSTOMER_EVENT_ID_MAX,
  CUSTOMER_ID_MAX,
  IDENTITY_VALUE_MAX,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_SECONDS,
  VALUE_MAX,
  VALUE_MAX_DECIMALS,
  WEBHOOK_MAX_BYTES,
  conversionValueOf,
} from '../../protocol/webhook';
import { CORRELATION_TOKEN_PATTERN } from '../../protocol/cookies';
import { CURRENCY_PATTERN, isCurrencyCode } from '../../protocol/currencies';
import { invalidParam } from '../http/errors';
import { NOT_BLANK } from '../http/validation';
import { Nullable } from '../http/schemas';

const VALUE_RULE = `a number from 0 to ${VALUE_MAX} with at most ${VALUE_MAX_DECIMALS} decimals (in the currency's major unit: 29.9 for 29.90 EUR), or null.`;
const CURRENCY_RULE = 'the ISO 4217 code of a current currency, in capital letters, such as "EUR" or "USD" (required with value), or null.';
const CUSTOMER_ID_RULE = `your stable id of the customer or account, 1 to ${CUSTOMER_ID_MAX} characters (not blank), or null.`;

/** `value`, `currency`, `customer_id`: on every report body. */
export const ValueFields = {
  value: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: VALUE_MAX }), Type.Null()], { description: VALUE_RULE })),
  currency: Type.Optional(Type.Union([Type.String({ pattern: CURRENCY_PATTERN.source }), Type.Null()], { description: CURRENCY_RULE })),
  customer_id: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: CUSTOMER_ID_MAX, pattern: NOT_BLANK }), Type.Null()], { description: CUSTOMER_ID_RULE }),
  ),
};

/** The value fields of a saas-signup body (its other fields are checked in report-input.ts). */
export const SignupValueBody = Type.Object(ValueFields);

const CustomerEventId = Type.String({
  minLength: 1,
  maxLength: CUSTOMER_EVENT_ID_MAX,
  pattern: NOT_BLANK,
  description: `your stable id of this conversion, 1 to ${CUSTOMER_EVENT_ID_MAX} characters: a repeat of it counts once.`,
});

/** An optional `occurred_at`: what it is checked against is the same everywhere (conversion-input.ts), its meaning per body. */
function occurredAt(description: string) {
  return Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], { description }));
}

const OccurredAt = occurredAt('an ISO 8601 date-time with a time zone (such as 2026-11-21T09:30:00Z), at most 90 days ago; default now.');

function identityField(name: string) {
  return Type.Optional(Type.Union([Type.String({ maxLength: IDENTITY_VALUE_MAX }), Type.Null()], { description: `${name}: a string of at most ${IDENTITY_VALUE_MAX} characters, or null.` }));
}

/** The body of a later stage's report (`POST /api/webhook-bridge/conversion/{site_key}/{trigger_key}`). */
export const ConversionBody = Type.Object({
  customer_event_id: CustomerEventId,
  customer_id: Type.String({ minLength: 1, maxLength: CUSTOMER_ID_MAX, pattern: NOT_BLANK, description: CUSTOMER_ID_RULE.replace(', or null', '') }),
  correlation_token: Type.Optional(
    Type.Union([Type.String({ pattern: CORRELATION_TOKEN_PATTERN.source }), Type.Null()], {
      description: 'the value of the cnv_signup_correlation cookie (22 base64url characters), or null.',
    }),
  ),
  value: ValueFields.value,
  currency: ValueFields.currency,
  occurred_at: OccurredAt,
  email: identityField('email'),
  phone: identityField('phone'),
  first_name: identityField('first_name'),
  last_name: identityField('last_name'),
  allow_uncorrelated: Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { description: 'true or false.' })),
});

/** The body of an adjustment (`POST /api/webhook-bridge/adjustment/{site_key}`). */
export const AdjustmentBody = Type.Object({
  adjustment_id: Type.String({
    minLength: 1,
    maxLength: ADJUSTMENT_ID_MAX,
    pattern: NOT_BLANK,
    description: `your stable id of this adjustment, 1 to ${ADJUSTMENT_ID_MAX} characters: a repeat of it is applied once.`,
  }),
  customer_event_id: CustomerEventId,
  type: Type.Union(ADJUSTMENT_TYPES.map((t) => Type.Literal(t)), {
    description: "'restate' (change the conversion's value; value required) or 'retract' (take the conversion back).",
  }),
  value: ValueFields.value,
  currency: ValueFields.currency,
  occurred_at: occurredAt(
    'when the change happened in your billing system (its event time): an ISO 8601 date-time with a time zone, at most 90 days ago; ' +
      'default now. A restatement dated before the restatement its conversion stands at (see current_value) is recorded but superseded: never sent, never the current value.',
  ),
});


/**
 * What a schema cannot say about value and currency: at most 6 decimals (float noise aside: the value comes back
 * rounded, conversionValueOf), a currency that exists, and a currency with every value. Returns the value to store
 * and its currency (both null when there is no value); throws the 400 naming the field.
 */
export function checkValueRules(body: { value?: number | null; currency?: string | null }): { value: number | null; currency: string | null } {
  const given = body.value !== undefined && body.value !== null;
  const value = given ? conversionValueOf(body.value) : null;
  if (given && value === null) {
    const inRange = typeof body.value === 'number' && body.value >= 0 && body.value <= VALUE_MAX;
    const why = inRange ? `: it has more than ${VALUE_MAX_DECIMALS} decimals` : '';
    throw invalidParam('value', `Invalid parameter 'value'${why}. Expected: ${VALUE_RULE}`);
  }
  if (body.currency !== undefined && body.currency !== null && !isCurrencyCode(body.currency)) {
    throw invalidParam('currency', `Invalid parameter 'currency': '${body.currency}' is not the ISO 4217 code of a current currency. Expected: ${CURRENCY_RULE}`);
  }
  if (value !== null && (body.currency === undefined || body.currency === null)) {
    throw invalidParam('currency', 'Missing parameter currency: a value needs its ISO 4217 currency code (such as "EUR").', 'parameter_missing');
  }
  return { value, currency: value === null ? null : (body.currency ?? null) };
}

/**
 * A currency written in small letters ('eur', as Stripe writes it) stays refused, as the contract wants three capital
 * letters, but its 400 says what to send ("use EUR"). Checked before the schema, whose message cannot say it.
 */
export function refuseCurrencyCase(body: Record<string, unknown>): void {
  const currency = body.currency;
  if (typeof currency !== 'string' || !/^[A-Za-z]{3}$/.test(currency)) return;
  const upper = currency.toUpperCase();
  if (upper !== currency && isCurrencyCode(upper)) {
    throw invalidParam('currency', `Invalid parameter 'currency': '${currency}' must be written in capital letters: use ${upper}. Expected: ${CURRENCY_RULE}`);
  }
}

const Identity = (what: string) =>
  Type.Optional(Nullable(Type.String({ maxLength: IDENTITY_VALUE_MAX, description: `${what}, raw: the service normalises and hashes it per destination.` })));

/** The body of a saas-signup report. */
export const ReportBody = Type.Object(
  {
    correlation_token: Type.Optional(
      Nullable(
        Type.String({
          pattern: '^[A-Za-z0-9_-]{22}$',
          description: 'The value of the cnv_signup_correlation cookie of the signup request (22 base64url characters), or null; left out, null.',
        }),
      ),
    ),
    customer_event_id: Type.String({
      minLength: 1,
      maxLength: CUSTOMER_EVENT_ID_MAX,
      description: 'Your stable id of the conversion (e.g. the user id): the service records one report per site and id; a repeat answers the first response.',
    }),
    email: Identity('The email address'),
    phone: Identity('The phone number'),
    first_name: Identity('The first name'),
    last_name: Identity('The last name'),
    allow_uncorrelated: Type.Optional(Type.Boolean({ description: 'Recorded with the report: true when sent without a token on purpose.' })),
    ...ValueFields,
  },
  { title: 'SaasSignupReport', additionalProperties: true, description: `At most ${WEBHOOK_MAX_BYTES / 1024} KB. Unknown fields are ignored.` },
);

/** The 200 answer of a report. */
export const ReportResponse = Type.Object(
  {
    status: Type.Union([Type.Literal('promoted'), Type.Literal('no_matching_flow')], {
      description: 'promoted: live flows with this trigger key fired (promoted_count says how many); no_matching_flow: kept, no live flow has the key.',
    }),
    promoted_count: Type.Integer({ minimum: 0 }),
    customer_event_id: Type.String(),
    correlated: Type.Optional(Type.Boolean({ description: 'Whether the report carried a token (paired with a browser snapshot, or waiting for one).' })),
  },
  { title: 'SaasSignupResponse', additionalProperties: false },
);

/** How a webhook request is signed, for the document's security scheme. */
export const SIGNATURE_SCHEME_DESCRIPTION = [
  `\`${SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex>\`. The hex is HMAC-SHA256, keyed with the site's webhook secret, of the`,
  'signing string `{t}.POST.{path}.{body}`: `t` the same Unix time in seconds; `path` the URL path exactly as sent',
  '(percent-encoded, starting at `/api/webhook-bridge/`, no scheme, host or query string); `body` the exact bytes sent',
  '(serialise once, sign those bytes, send those bytes). Lower-case hex. The service rejects a timestamp more than',
  `${SIGNATURE_TOLERANCE_SECONDS} s in the past or in the future: re-sign every retry. Several \`v1=\` values may be sent; the request`,
  'passes when one matches a current secret of the site (after a rotation the previous secret verifies for 24 hours).',
  '401 codes: no_signature_header, malformed_header, no_signature_match, timestamp_outside_tolerance, no_webhook_secret.',
].join(' ');

/** The 200 answer of a later stage: a report's answer, and how its click was found. */
export const ConversionResponse = Type.Object(
  {
    ...ReportResponse.properties,
    match: Type.Union([Type.Literal('click'), Type.Literal('identity'), Type.Literal('none')], {
      description: "click: by the body's correlation_token; identity: through the latest signup of the same customer_id; none: neither.",
    }),
  },
  { title: 'ConversionResponse', additionalProperties: false },
);

/** The 200 answer of an adjustment. */
export const AdjustmentResponse = Type.Object(
  {
    status: Type.Literal('accepted'),
    adjustment_id: Type.String(),
    events: Type.Integer({ minimum: 0, description: 'How many events of the report the adjustment applies to.' }),
  },
  { title: 'AdjustmentResponse', additionalProperties: false },
);
