/**
 * Google's normalisation of user-provided identifiers for the Data Manager API, and their SHA-256 hex hashes.
 * Rules: https://developers.google.com/data-manager/api/devguides/concepts/formatting ("Format user data").
 */
import { normalizePhoneE164, type RawIdentity } from '../../../protocol/identity';
import { sha256Hex } from '../hashing';

/** One Data Manager `UserIdentifier` (a oneof: exactly one field), hashed and hex-encoded. */
export type HashedUserIdentifier = { emailAddress: string } | { phoneNumber: string };

/** Google takes at most 10 user identifiers per event (https://developers.google.com/data-manager/api/limits). */
export const MAX_USER_IDENTIFIERS_PER_EVENT = 10;

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * Normalises an email as Google documents it: all whitespace removed (leading, trailing and intermediate), lower-case,
 * and for gmail.com / googlemail.com the `+` of the local part and all after it removed, then every dot before the @
 * (`cloudy.sanfrancisco+shopping@gmail.com` → `cloudysanfrancisco@gmail.com`); other domains keep their dots and `+`
 * (`user.name+NYC@Example.com` → `user.name+nyc@example.com`). Verified 2026-11-28 against "Format user data",
 * https://developers.google.com/data-manager/api/devguides/concepts/formatting (its examples are these two); an older
 * copy of that page (.../get-started/formatting) did not have the `+` rule, which an earlier version here followed.
 * The legacy Google Ads API path hashes with this same rule: its page (conversions/enhance-conversions) was not read in
 * full here. Null when it is not one user@domain, or when nothing is left before the @.
 */
export function normalizeEmail(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const email = raw.replace(/\s+/g, '').toLowerCase();
  const at = email.indexOf('@');
  if (at <= 0 || at !== email.lastIndexOf('@') || at === email.length - 1) return null;
  const domain = email.slice(at + 1);
  let local = email.slice(0, at);
  if (GMAIL_DOMAINS.has(domain)) {
    const plus = local.indexOf('+');
    local = (plus === -1 ? local : local.slice(0, plus)).replace(/\./g, '');
  }
  return local === '' ? null : `${local}@${domain}`;
}

/**
 * Normalises a phone number to E.164 (`+` then the country code and number, digits only): the one definition in
 * src/protocol/identity.ts, which Google's page describes. A number without its country code is null.
 */
export const normalizePhone = normalizePhoneE164;

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
