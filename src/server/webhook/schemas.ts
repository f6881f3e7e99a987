/**
 * The webhook bridge described for its readers (the OpenAPI document): the report body and the answer. The body is
 * checked by hand after the signature (report-input.ts: the HMAC covers the raw bytes, so Fastify must not parse it
 * first); these schemas document the same rules, with the limits taken from src/protocol/webhook.ts.
 */
import { Type } from '@sinclair/typebox';
import {
  CUSTOMER_EVENT_ID_MAX,
  IDENTITY_VALUE_MAX,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_SECONDS,
  WEBHOOK_MAX_BYTES,
} from '../../protocol/webhook';
import { Nullable } from '../http/schemas';

const Identity = (what: string) =>
  Type.Optional(Nullable(Type.String({ maxLength: IDENTITY_VALUE_MAX, description: `${what}, raw: the service normalises and hashes it per destination.` })));

/** The body of a saas-signup report. */
export const ReportBody = Type.Object(
  {
    correlation_token: Nullable(
      Type.String({
        pattern: '^[A-Za-z0-9_-]{22}$',
        description: 'The value of the cnv_signup_correlation cookie of the signup request (22 base64url characters), or null.',
      }),
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
