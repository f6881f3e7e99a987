/**
 * LinkedIn's user matching: which identifiers a conversion event carries and how they are normalised. LinkedIn's own
 * Conversions API integration (github.com/linkedin-developers/reactor-extension-linkedin-edge, helpers/normalizers.js)
 * lower-cases and trims an email before SHA-256, and requires at least one user id per event (an email, the
 * `li_fat_id` first-party click id, a GAID or an IP address; userIdentificationSection/validate.js).
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
 */
import type { DeliveryInput } from '../destination';
import { sha256Hex } from '../hashing';
import { normalizeEmail } from '../../../protocol/identity';

export const SHA256_EMAIL = 'SHA256_EMAIL';
/** The `li_fat_id` click id that Campaign Manager's enhanced conversion tracking appends to ad clicks. */
export const LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID = 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID';

export type LinkedInIdType = typeof SHA256_EMAIL | typeof LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID;

export interface LinkedInUserId {
  idType: LinkedInIdType;
  idValue: string;
}

/** `user.userInfo` as LinkedIn takes it: plain text names (LinkedIn matches them with the ids, it does not want them hashed). */
export interface LinkedInUserInfo {
  firstName: string;
  lastName: string;
}

export interface LinkedInUser {
  userIds: LinkedInUserId[];
  userInfo?: LinkedInUserInfo;
}

/** LinkedIn's email normalisation before hashing: trimmed and lower-cased (src/protocol/identity.ts). Null when it is not an address at all. */
export const normaliseEmail = normalizeEmail;

/** The SHA-256 hex of a normalised email, or null when there is no usable email. */
export function hashedEmail(raw: string | null | undefined): string | null {
  const email = normaliseEmail(raw);
  return email === null ? null : sha256Hex(email);
}

/** The `li_fat_id` of the conversion: the landing's click id, else the `li_fat_id` first-party cookie. */
export function linkedInClickId(input: Pick<DeliveryInput, 'clickIds' | 'cookies'>): string | null {
  for (const value of [input.clickIds.li_fat_id, input.cookies.li_fat_id]) {
    const id = typeof value === 'string' ? value.trim() : '';
    if (id !== '') return id;
  }
  return null;
}

/**
 * The longest first or last name `userInfo` takes: 35 characters (as LinkedIn's partners document it: Salesforce's
 * Conversions API connector for firstName, HCL's LinkedIn connector for both names of the same userInfo; LinkedIn's
 * own page is not in the corpus). A longer one is left out rather than cut: a cut name would match someone else.
 */
export const MAX_NAME_LENGTH = 35;

/** First and last name for `userInfo`, only when both are given (LinkedIn's userInfo matching needs the pair) and fit. */
export function userInfoOf(input: Pick<DeliveryInput, 'identity'>): LinkedInUserInfo | null {
  const firstName = input.identity.first_name?.trim() ?? '';
  const lastName = input.identity.last_name?.trim() ?? '';
  const fits = (name: string) => name !== '' && [...name].length <= MAX_NAME_LENGTH;
  return fits(firstName) && fits(lastName) ? { firstName, lastName } : null;
}

/**
 * The `user` object of one event, or null when LinkedIn has nothing to match on. `userIds` is always there (LinkedIn
 * requires the field); with neither an email nor a click id it is empty and the first and last name carry the match,
 * as LinkedIn allows when `userInfo` is given (facts in ./index.ts).
 */
export function buildUser(input: Pick<DeliveryInput, 'identity' | 'clickIds' | 'cookies'>): LinkedInUser | null {
  const userIds: LinkedInUserId[] = [];
  const email = hashedEmail(input.identity.email);
  if (email !== null) userIds.push({ idType: SHA256_EMAIL, idValue: email });
  const clickId = linkedInClickId(input);
  if (clickId !== null) userIds.push({ idType: LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID, idValue: clickId });
  const userInfo = userInfoOf(input);
  if (userInfo === null) return userIds.length === 0 ? null : { userIds };
  return { userIds, userInfo };
}
