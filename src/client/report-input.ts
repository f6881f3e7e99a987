/** The input of `reportSignup`, its checks, and the webhook request body built from it. */
import { CUSTOMER_EVENT_ID_MAX, IDENTITY_VALUE_MAX, WEBHOOK_MAX_BYTES, type SaasSignupReport } from '../protocol/webhook';
import type { RequestLike } from './correlation';

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
}

/** A problem with one input field, found before anything is sent. */
export interface InputProblem {
  param: string;
  message: string;
}

const IDENTITY_FIELDS = [
  ['email', 'email'],
  ['phone', 'phone'],
  ['firstName', 'first_name'],
  ['lastName', 'last_name'],
] as const;

/** Checks the fields of an input that do not depend on the token; null when all are fine. */
export function checkInput(input: ReportSignupInput): InputProblem | null {
  const id: unknown = input.customerEventId;
  if (typeof id !== 'string' || id.length === 0 || id.length > CUSTOMER_EVENT_ID_MAX) {
    return {
      param: 'customerEventId',
      message: `customerEventId must be a string of 1 to ${CUSTOMER_EVENT_ID_MAX} characters (got ${describe(id)}).`,
    };
  }
  for (const [field] of IDENTITY_FIELDS) {
    const value: unknown = input[field];
    if (value !== undefined && value !== null && (typeof value !== 'string' || value.length > IDENTITY_VALUE_MAX)) {
      return { param: field, message: `${field} must be a string of at most ${IDENTITY_VALUE_MAX} characters, or null (got ${describe(value)}).` };
    }
  }
  const allow: unknown = input.allowUncorrelated;
  if (allow !== undefined && typeof allow !== 'boolean') {
    return { param: 'allowUncorrelated', message: `allowUncorrelated must be a boolean (got ${describe(allow)}).` };
  }
  return null;
}

/** The webhook request body for a checked input and the token to send (null only when uncorrelated is allowed). */
export function reportBody(input: ReportSignupInput, token: string | null): SaasSignupReport {
  return {
    correlation_token: token,
    customer_event_id: input.customerEventId,
    email: input.email ?? null,
    phone: input.phone ?? null,
    first_name: input.firstName ?? null,
    last_name: input.lastName ?? null,
    allow_uncorrelated: input.allowUncorrelated === true,
  };
}

/** Serialises a body once into the exact bytes that are signed and sent; a problem when it is over the size limit. */
export function encodeBody(body: SaasSignupReport): { bytes: Uint8Array<ArrayBuffer> } | InputProblem {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  if (bytes.length > WEBHOOK_MAX_BYTES) {
    return { param: 'body', message: `The report is ${bytes.length} bytes, over the ${WEBHOOK_MAX_BYTES} byte limit.` };
  }
  return { bytes };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  return value === null ? 'null' : typeof value;
}
