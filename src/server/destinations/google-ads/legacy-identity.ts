/**
 * Identity fields of a report, normalised and SHA-256 hashed the way Google Ads documents it for enhanced conversions
 * for leads (developers.google.com/google-ads/api/docs/conversions/upload-identifiers, and the field docs of
 * UserIdentifier and OfflineUserAddressInfo). Raw values never leave this module; only hashes and notes do.
 */
import { createHash } from 'node:crypto';

/** The raw identity fields a report may carry (webhook body: email, phone, first_name, last_name). */
export interface RawIdentity {
  email?: string | null;
  phone?: string | null;
  first_name?: string | null;
  last_name?: string | null;
}

/** Hashed identifiers ready for a destination, and why any field present was left out. */
export interface HashedIdentity {
  email: string | null;
  phone: string | null;
  /** One sentence per field that was given but could not be used (never containing the value itself). */
  skipped: string[];
}

/** Lower-case hex SHA-256 of a UTF-8 string. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * Google's email normalisation: trim, lower-case, and remove every period before the `@` of gmail.com and
 * googlemail.com addresses. Nothing else: Google documents no `+suffix` removal, so `a+b@gmail.com` stays as is.
 * Null when it is not an address (no single `@` with text on both sides, or whitespace inside).
 */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1 || email.indexOf('@') !== at || /\s/.test(email)) return null;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  return `${GMAIL_DOMAINS.has(domain) ? local.replace(/\./g, '') : local}@${domain}`;
}

/**
 * A phone number in E.164 (`+` country code and subscriber number, at most 15 digits), as Google requires before hashing.
 * Spaces, dashes, dots and parentheses are dropped. A number without a leading `+` is null: a national number does not
 * say its country, and guessing one would hash a different person's number.
 */
export function normalizePhone(raw: string): string | null {
  const compact = raw.trim().replace(/[\s\-.()\u00a0]/g, '');
  return /^\+[1-9]\d{6,14}$/.test(compact) ? compact : null;
}

function present(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/**
 * Normalises and hashes the identity fields Google Ads can match alone (email, phone); fields that cannot be normalised
 * are skipped with a note. Names are not sent: Google matches them only within a whole address (country, postal code).
 */
export function hashIdentityForGoogleAds(identity: RawIdentity): HashedIdentity {
  const skipped: string[] = [];
  const hashed = (
    field: string,
    raw: string | null | undefined,
    normalize: (v: string) => string | null,
    why: string,
  ): string | null => {
    if (!present(raw)) return null;
    const normalized = normalize(raw);
    if (normalized === null) {
      skipped.push(`${field} skipped: ${why}`);
      return null;
    }
    return sha256Hex(normalized);
  };
  return {
    email: hashed('email', identity.email, normalizeEmail, 'not an email address'),
    phone: hashed(
      'phone',
      identity.phone,
      normalizePhone,
      'not in E.164 form (a leading + and the country code are required; a national number cannot be normalised)',
    ),
    skipped,
  };
}
