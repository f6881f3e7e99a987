/**
 * Identity fields for the legacy uploadClickConversions path: normalised and hashed by Google's one set of rules
 * (./identity.ts, shared with the Data Manager API), with a note for each field given but not usable. Raw values never
 * leave this module; only hashes and notes do.
 */
import type { RawIdentity } from '../../../protocol/identity';
import { identityHasher } from '../hashing';
import { normalizeEmail, normalizePhone } from './identity';

/** Hashed identifiers ready for a ClickConversion, and why any field present was left out. */
export interface HashedIdentity {
  email: string | null;
  phone: string | null;
  /** One sentence per field that was given but could not be used (never containing the value itself). */
  skipped: string[];
}

/**
 * Normalises and hashes the identity fields Google Ads can match alone (email, phone); fields that cannot be normalised
 * are skipped with a note. Names are not sent: Google matches them only within a whole address (country, postal code).
 */
export function hashIdentityForGoogleAds(identity: RawIdentity): HashedIdentity {
  const skipped: string[] = [];
  const hashed = identityHasher(skipped);
  return {
    email: hashed('email', identity.email, normalizeEmail, 'not an email address'),
    phone: hashed(
      'phone',
      identity.phone,
      normalizePhone,
      'not in E.164 form (a leading + or 00 and the country code are required; a national number cannot be normalised)',
    ),
    skipped,
  };
}
