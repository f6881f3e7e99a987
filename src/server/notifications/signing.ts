/**
 * Standard Webhooks signing (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
 * the secret is `whsec_` + base64 of random bytes; the signed content is `{webhook-id}.{webhook-timestamp}.{body}`;
 * `webhook-signature` is `v1,` + base64(HMAC-SHA256(base64-decoded secret, signed content)); the timestamp is integer
 * seconds since the epoch. Any Standard Webhooks library verifies what this signs (a test checks with the npm package).
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: 24 random bytes (the spec asks between 24 and 64). */
export function newEndpointSecret(random: (size: number) => Uint8Array = randomBytes): string {
  return `${PREFIX}${Buffer.from(random(24)).toString('base64')}`;
}

/** The three headers of one delivery of a message. */
export function signedHeaders(secret: string, messageId: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': messageId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
