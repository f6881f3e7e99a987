/**
 * Google's normalisation of user-provided identifiers for the Data Manager API, and their SHA-256 hex hashes.
 * Rules: https://developers.google.com/data-manager/api/get-started/formatting ("Format user data").
 */
import type { RawIdentity } from '../../../protocol/identity';
import { sha256Hex } from '../hashing';

/** One Data Manager `UserIdentifier` (a oneof: exactly one field), hashed and hex-encoded. */
export type HashedUserIdentifier = { emailAddress: string } | { phoneNumber: string };

/** Google takes at most 10 user identifiers per event (https://developers.google.com/data-manager/api/limits). */
export const MAX_USER_IDENTIFIERS_PER_EVENT = 10;

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * Normalises an email as Google documents it: all whitespace removed (leading, trailing and intermediate), lower-case,
 * and for gmail.com / googlemail.com every dot before the @ removed. Google's page says nothing of a `+tag`, so it is
 * kept (its own client library drops it for Gmail; we follow the page). Null when it is not one user@domain.
 */
export function normalizeEmail(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const email = raw.replace(/\s+/g, '').toLowerCase();
  const at = email.indexOf('@');
  if (at <= 0 || at !== email.lastIndexOf('@') || at === email.length - 1) return null;
  const domain = email.slice(at + 1);
  let local = email.slice(0, at);
  if (GMAIL_DOMAINS.has(domain)) local = local.replace(/\./g, '');
  return local === '' ? null : `${local}@${domain}`;
}

/**
 * Normalises a phone number to E.164 (`+` then the country code and number, digits only: "(800)555-0100" with its
 * country code is "+18005550100"). Only a number that carries its country code (a leading `+` or the international
 * `00` prefix) can be made E.164 without guessing; any other is null, so a wrong hash is never sent.
 */
export function normalizePhone(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const text = raw.trim();
  let digits: string;
  if (text.startsWith('+')) digits = text.slice(1).replace(/[\s().\-/]/g, '');
  else if (text.startsWith('00')) digits = text.slice(2).replace(/[\s().\-/]/g, '');
  else return null;
  // E.164: at most 15 digits, and a country code never starts with 0.
  if (!/^[1-9]\d{6,14}$/.test(digits)) return null;
  return `+${digits}`;
}

/** Normalises a given or family name as Google documents it (trim, lower-case); null when blank. */
export function normalizeName(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw.trim().toLowerCase();
  return name === '' ? null : name;
}

/**
 * The hashed identifiers Google can match for one conversion: email, then phone. Names are not sent: Google takes them
 * only inside an `address` (AddressInfo) whose givenName, familyName, regionCode and postalCode are all required
 * (https://developers.google.com/data-manager/api/reference/rest/v1/UserData), and a report carries no region or
 * postal code, so an address would be rejected.
 */
export function hashedUserIdentifiers(identity: RawIdentity): HashedUserIdentifier[] {
  const identifiers: HashedUserIdentifier[] = [];
  const email = normalizeEmail(identity.email);
  if (email) identifiers.push({ emailAddress: sha256Hex(email) });
  const phone = normalizePhone(identity.phone);
  if (phone) identifiers.push({ phoneNumber: sha256Hex(phone) });
  return identifiers.slice(0, MAX_USER_IDENTIFIERS_PER_EVENT);
}
