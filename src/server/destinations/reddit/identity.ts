/**
 * Reddit's match keys: email, phone and IP address canonicalised and SHA-256 hashed as Reddit's documents describe,
 * the click id (`rdt_cid`), the pixel's browser id (`_rdt_uuid`) and the user agent as they are. Raw identity never
 * leaves this module: only hashes and sentences naming a skipped field (never its value). Facts: ./index.ts.
 */
import { isIP } from 'node:net';
import type { RawIdentity } from '../../../protocol/identity';
import { internationalDigits, signalValue } from '../browser-signals';
import { identityHasher, sha256Hex } from '../hashing';

/** Hashed `user` fields, and one sentence per given field that could not be used. */
export interface RedditHashedIdentity {
  email: string | null;
  phone_number: string | null;
  /** The reporter's `customer_id`, hashed (Reddit's advertiser-assigned `external_id`). */
  external_id: string | null;
  skipped: string[];
}

/**
 * Reddit's email canonicalisation (Reddit's “Manual Advanced Matching”, “Hashing email addresses”): lower-case; in
 * the local part, drop everything from the first `+` and every character that is not a letter or digit.
 * `Al.ice$+Apple@Example.Com` → `alice@example.com` (Reddit's own example, ff8d9819…; the `$` goes too, so dots alone
 * are not the rule). Null when it is not an address (one `@`, something left on both sides, a dot in the domain).
 */
export function canonicalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  const at = email.indexOf('@');
  if (at <= 0 || at !== email.lastIndexOf('@') || /\s/.test(email)) return null;
  const domain = email.slice(at + 1);
  const local = email.slice(0, at).split('+')[0]!.replace(/[^a-z0-9]/g, '');
  if (local === '' || !/^[^.]+(\.[^.]+)+$/.test(domain)) return null;
  return `${local}@${domain}`;
}

/**
 * Reddit's phone canonicalisation: the country code included, the extension and every non-digit removed, `+` first
 * (`+1 (555) 444-1234 ext. 5` → `+15554441234`). The country must be in the number (`+` or `00`): a national number is
 * null rather than hashed with a guessed country.
 */
export function canonicalizePhone(raw: string): string | null {
  let text = raw.trim();
  const extension = /\s*(?:ext\.?|extension|x|#)\s*\d+\s*$/i.exec(text);
  if (extension) text = text.slice(0, extension.index);
  const digits = internationalDigits(text);
  return digits === null ? null : `+${digits}`;
}

/**
 * Reddit's `external_id` before hashing: the advertiser's own id of the customer as it is, only trimmed (Reddit's
 * “Match keys”: `customer12345`, hashed `a4cc2fc5…`; case is kept, ids may be case-sensitive). Null when blank.
 */
export function canonicalizeExternalId(raw: string): string | null {
  const id = raw.trim();
  return id === '' ? null : id;
}

/**
 * Normalises and hashes email, phone and the reporter's customer id for Reddit; a field that cannot be normalised is
 * skipped with a note.
 */
export function hashIdentityForReddit(identity: RawIdentity, customerId: string | null = null): RedditHashedIdentity {
  const skipped: string[] = [];
  const hashed = identityHasher(skipped);
  return {
    email: hashed('email', identity.email, canonicalizeEmail, 'not an email address'),
    phone_number: hashed('phone', identity.phone, canonicalizePhone, 'the country code is missing (start the number with + and the country code) or it is not a phone number'),
    external_id: hashed('customer_id', customerId, canonicalizeExternalId, 'blank'),
    skipped,
  };
}

/** The SHA-256 of the visitor's IP address, when it is one (IPv6 lower-cased). */
export function hashedIp(ip: string | null): string | null {
  if (!ip || isIP(ip.trim()) === 0) return null;
  return sha256Hex(ip.trim().toLowerCase());
}

/** The Reddit click id of the landing (`rdt_cid`), trimmed; null when there is none or it holds whitespace. */
export function clickIdOf(clickIds: Readonly<Record<string, string>>): string | null {
  return signalValue(clickIds, 'rdt_cid');
}

/** The `_rdt_uuid` cookie the Reddit Pixel wrote; cnv never invents one. */
export function uuidOf(cookies: Readonly<Record<string, string>>): string | null {
  return signalValue(cookies, '_rdt_uuid');
}
