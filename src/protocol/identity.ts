/** The identity fields a conversion may carry (webhook reports, form submissions): raw, never pre-hashed. */

/** Names of the identity fields, as the webhook body and the form-submission body spell them. */
export const IDENTITY_FIELDS = ['email', 'phone', 'first_name', 'last_name'] as const;

export type IdentityField = (typeof IDENTITY_FIELDS)[number];

/** Raw identity fields; each may be absent or null. The service normalises and hashes them per destination. */
export type RawIdentity = Partial<Record<IdentityField, string | null>>;

/** Longest identity field value accepted, in characters. */
export const MAX_IDENTITY_FIELD_LENGTH = 512;
