/**
 * Verification of the webhook's `X-Service-Signature`: a pure function over (raw body, header, secrets, path, clock),
 * after stripe-node's Webhooks. Knows nothing of HTTP frameworks; the route hands it the raw bytes and the raw path.
 */
import { timingSafeEqual } from 'node:crypto';
import { computeSignature } from '../../protocol/hmac-node';
import { parseSignatureHeader, SIGNATURE_TOLERANCE_SECONDS } from '../../protocol/webhook';

export interface VerifySignatureInput {
  /** The request body exactly as received: never a parsed and re-serialised object. */
  rawBody: Buffer | Uint8Array | string;
  /** The `X-Service-Signature` header value (Node gives an array when the header was repeated). */
  header: string | readonly string[] | null | undefined;
  /** Every secret currently valid for the trigger: the current one and, during a rotation, the previous one. */
  secrets: readonly string[];
  /** The request path as received (still percent-encoded); a query string is ignored. */
  path: string;
  /** Unix seconds; the system clock when left out. */
  nowSeconds?: number;
  /** Largest accepted age, in either direction, in seconds; default SIGNATURE_TOLERANCE_SECONDS. */
  toleranceSeconds?: number;
}

export type SignatureFailureCode =
  | 'no_signature_header'
  | 'malformed_header'
  | 'no_secret'
  | 'no_signature_match'
  | 'timestamp_outside_tolerance';

export type VerifySignatureResult =
  | {
      ok: true;
      /** The header's timestamp. */
      timestamp: number;
      /** Index in `secrets` of the secret that matched: a non-zero index means a caller still signs with an old secret. */
      secretIndex: number;
    }
  | { ok: false; code: SignatureFailureCode; message: string };

const MESSAGES: Record<SignatureFailureCode, string> = {
  no_signature_header: 'No signature header: send X-Service-Signature: t=<unix seconds>,v1=<hex hmac-sha256>.',
  malformed_header:
    'Malformed signature header: expected t=<unix seconds>,v1=<64 hex characters> (several v1= values may follow).',
  no_secret: 'No webhook secret is configured for this trigger.',
  no_signature_match:
    'No signature matched: are you signing the raw body bytes exactly as sent, and the path without query string, ' +
    'with the current webhook secret?',
  timestamp_outside_tolerance: 'Timestamp outside tolerance: check the server clock (and re-sign every retry).',
};

/** The failure verdict of a code, with its message. */
export function signatureFailure(code: SignatureFailureCode): VerifySignatureResult {
  return { ok: false, code, message: MESSAGES[code] };
}

/** Checks a webhook request's signature against every given secret; says why when it fails. */
export function verifySignature(input: VerifySignatureInput): VerifySignatureResult {
  const { rawBody } = input;
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    // A parsed body cannot be verified: its bytes are gone. This is a wiring bug in the caller, not a bad request.
    throw new TypeError('verifySignature needs the raw request body (Buffer or string), not a parsed object.');
  }
  const header = Array.isArray(input.header) ? input.header.join(',') : (input.header as string | null | undefined);
  if (!header || !header.trim()) return signatureFailure('no_signature_header');
  const parsed = parseSignatureHeader(header);
  if (!parsed) return signatureFailure('malformed_header');
  if (input.secrets.length === 0) return signatureFailure('no_secret');

  const path = stripQuery(input.path);
  const provided = parsed.digests.map((hex) => Buffer.from(hex, 'hex'));
  let secretIndex = -1;
  input.secrets.forEach((secret, index) => {
    const expected = Buffer.from(computeSignature(secret, parsed.timestamp, path, rawBody), 'hex');
    // Compare against every digest without stopping early, so timing reveals nothing about which one was close.
    for (const digest of provided) {
      if (digest.length === expected.length && timingSafeEqual(digest, expected) && secretIndex < 0) secretIndex = index;
    }
  });
  if (secretIndex < 0) return signatureFailure('no_signature_match');

  // Checked after the match (as stripe does): a stale but genuine request is told about the clock, a forgery is not.
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - parsed.timestamp) > tolerance) return signatureFailure('timestamp_outside_tolerance');
  return { ok: true, timestamp: parsed.timestamp, secretIndex };
}

function stripQuery(path: string): string {
  const cut = path.search(/[?#]/);
  return cut < 0 ? path : path.slice(0, cut);
}
