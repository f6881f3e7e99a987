/** The identity fields a conversion may carry (webhook reports, form submissions): raw, never pre-hashed. */

/** Names of the identity fields, as the webhook body and the form-submission body spell them. */
export const IDENTITY_FIELDS = ['email', 'phone', 'first_name', 'last_name'] as const;

export type IdentityField = (typeof IDENTITY_FIELDS)[number];

/** Raw identity fields; each may be absent or null. The service normalises and hashes them per destination. */
export type RawIdentity = Partial<Record<IdentityField, string | null>>;

/** Longest identity field value accepted, in characters. */
export const MAX_IDENTITY_FIELD_LENGTH = 512;

/**
 * An email address as delivery and erasure compare it: trimmed and lower-cased, nothing more. Null when it is not one
 * address (one `@` with text on each side and no whitespace). LinkedIn hashes exactly this; other platforms add their
 * own rules on top (Google drops Gmail dots, Microsoft `+` aliases).
 */
export function normalizeEmail(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const email = raw.trim().toLowerCase();
  // One "@" with something on each side: anything else would only hash to an id that matches nobody.
  return /^[^\s@]+@[^\s@]+$/.test(email) ? email : null;
}

/**
 * The national trunk prefix written in parentheses after the country code (`+44 (0)20 7946 0958`, common in the UK,
 * Germany, Switzerland, the Netherlands, Australia): dialled only from inside the country, never part of the E.164
 * number. Parentheses around other digits are grouping (`+1 (800) 555-0100`) and stay digits.
 */
export const TRUNK_PREFIX = /\(\s*0\s*\)/g;

/**
 * A phone number in E.164 (`+` then the country code and number, digits only: "+1 (800) 555-0100" is "+18005550100";
 * "+44 (0)20 7946 0958" is "+442079460958", its trunk prefix dropped).
 * Only a number that carries its country code (a leading `+` or the international `00` prefix) can be made E.164
 * without guessing; any other is null, so a wrong hash is never sent and a wrong person never erased.
 */
export function normalizePhoneE164(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const text = raw.trim().replace(TRUNK_PREFIX, '');
  let digits: string;
  if (text.startsWith('+')) digits = text.slice(1).replace(/[\s().\-/]/g, '');
  else if (text.startsWith('00')) digits = text.slice(2).replace(/[\s().\-/]/g, '');
  else return null;
  // E.164: at most 15 digits, and a country code never starts with 0.
  if (!/^[1-9]\d{6,14}$/.test(digits)) return null;
  return `+${digits}`;
}
