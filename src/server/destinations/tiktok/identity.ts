/**
 * TikTok's user matching for web events: email and phone normalised and SHA-256 hashed, the click id (`ttclid`) and
 * the pixel's browser cookie (`_ttp`) as they are, IP and user agent unhashed. Raw identity never leaves this module:
 * only hashes and sentences naming a skipped field (never its value).
 * Rules: see the facts in ./index.ts (TikTok's request sample and TikTok's own Segment formatter).
 */
import type { RawIdentity } from '../../../protocol/identity';
import { internationalDigits, signalValue } from '../browser-signals';
import { identityHasher } from '../hashing';

/** Hashed `user` fields, and one sentence per given field that could not be used. */
export interface TikTokHashedIdentity {
  email: string | null;
  phone: string | null;
  /** The reporter's `customer_id`, normalised and hashed as TikTok's `external_id`. */
  external_id: string | null;
  skipped: string[];
}

/** Email: trimmed and lower-cased. Null when it is not an address (one `@` with text both sides and a dot after it). */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null;
}

/**
 * Phone: E.164, a `+` and the digits with the country code. cnv knows the country only when the number says it (a
 * leading `+` or the international prefix `00`); a national number is null rather than hashed with a guessed country.
 */
export function normalizePhone(raw: string): string | null {
  const digits = internationalDigits(raw);
  return digits === null ? null : `+${digits}`;
}

/**
 * `external_id` before hashing: trimmed and lower-cased, as TikTok's own formatter does (“Leading/Trailing spaces are
 * trimmed and then userId is hashed”, after `toLowerCase()`), so the pixel's `ttq.identify` and cnv hash alike.
 */
export function normalizeExternalId(raw: string): string | null {
  const id = raw.trim().toLowerCase();
  return id === '' ? null : id;
}

/**
 * Normalises and hashes email, phone and the reporter's customer id for TikTok; a field that cannot be normalised is
 * skipped with a note.
 */
export function hashIdentityForTikTok(identity: RawIdentity, customerId: string | null = null): TikTokHashedIdentity {
  const skipped: string[] = [];
  const hashed = identityHasher(skipped);
  return {
    email: hashed('email', identity.email, normalizeEmail, 'not an email address'),
    phone: hashed('phone', identity.phone, normalizePhone, 'the country code is missing (start the number with + and the country code) or it is not a phone number'),
    external_id: hashed('customer_id', customerId, normalizeExternalId, 'blank'),
    skipped,
  };
}

/** The TikTok click id of the landing (`ttclid`), trimmed; null when there is none or it holds whitespace. */
export function ttclidOf(clickIds: Readonly<Record<string, string>>): string | null {
  return signalValue(clickIds, 'ttclid');
}

/** The `_ttp` cookie the TikTok Pixel wrote; cnv never invents one. */
export function ttpOf(cookies: Readonly<Record<string, string>>): string | null {
  return signalValue(cookies, '_ttp');
}
