/**
 * The webhook HMAC, computed in one place for the client (signing) and the service (verifying).
 * Node only (node:crypto): deliberately not re-exported from ./index, so the browser loader never pulls it in.
 */
import { createHmac } from 'node:crypto';
import { formatSignatureHeader, signingString } from './webhook';

/** Hex HMAC-SHA256 of `{timestamp}.POST.{path}.{body}` under `secret`, over the body's exact bytes. */
export function computeSignature(secret: string, timestamp: number, path: string, body: string | Uint8Array): string {
  // The prefix comes from the one signingString definition; the body is fed as bytes so a Buffer is never re-decoded.
  const prefix = signingString(timestamp, path, '');
  return createHmac('sha256', secret).update(prefix, 'utf8').update(body).digest('hex');
}

/** Current Unix time in whole seconds. */
export function unixSeconds(nowMs: number = Date.now()): number {
  return Math.floor(nowMs / 1000);
}

export interface TestSignatureHeaderInput {
  /** The webhook secret. */
  secret: string;
  /** URL path only, as sent (percent-encoded), without scheme, host or query string. */
  path: string;
  /** The exact body bytes (or string) that will be sent. */
  body: string | Uint8Array;
  /** Unix seconds; now when left out. */
  timestamp?: number;
}

/** A valid `X-Service-Signature` header value for a body: for tests, and for signing by hand. */
export function generateTestSignatureHeader(input: TestSignatureHeaderInput): string {
  const timestamp = input.timestamp ?? unixSeconds();
  return formatSignatureHeader(timestamp, [computeSignature(input.secret, timestamp, input.path, input.body)]);
}
