/** Identifiers and secrets: prefixed random ids, public site keys, API keys and webhook secrets. */
import { createHash, randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes from the operating system's CSPRNG, drawn 4 KiB at a time: every id took a Buffer of its own from
 * randomBytes, the largest single source of garbage of the webhook (a report batch makes half a dozen ids per report).
 * Each byte is used once.
 */
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++]!;
}

/** Random characters from an alphabet, without modulo bias. */
function randomString(length: number, alphabet: string): string {
  const limit = 256 - (256 % alphabet.length);
  const codes: number[] = [];
  while (codes.length < length) {
    const byte = randomByte();
    if (byte < limit) codes.push(alphabet.charCodeAt(byte % alphabet.length));
  }
  return String.fromCharCode(...codes);
}

/** The prefixes of our object ids. */
export type IdPrefix = 'acct' | 'key' | 'site' | 'hdf' | 'dst' | 'trs' | 'flow' | 'evt' | 'act' | 'rpt' | 'fsub' | 'adj' | 'adr' | 'nep' | 'era';

/** A new object id such as `site_4fQx…`: prefix, underscore, 20 base62 characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomString(20, BASE62)}`;
}

/** A new public site key: 12 lower-case base36 characters, short enough for a snippet, not the site's id. */
export function newSiteKey(): string {
  return randomString(12, BASE36);
}

/** A new secret API key, shown once: `cnv_sk_` and 32 base62 characters. */
export function newApiKey(): string {
  return `cnv_sk_${randomString(32, BASE62)}`;
}

/**
 * Where an API key (`cnv_sk_…`) or a signing secret (`whsec_…`: a webhook's, base62; a notification endpoint's, base64)
 * stands in a text such as a url, percent-encoded or not: for hiding it.
 */
export const SECRET_IN_TEXT = /\b(?:cnv_sk_|whsec_)[A-Za-z0-9+=%_-]*/g;

/** A new webhook signing secret: `whsec_` and 32 base62 characters. */
export function newWebhookSecret(): string {
  return `whsec_${randomString(32, BASE62)}`;
}

/** An unguessable url token (hosted handoff pages). */
export function newUrlToken(): string {
  return randomString(32, BASE62);
}

/** SHA-256 hex of a secret, as stored (API keys are never stored in clear). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
