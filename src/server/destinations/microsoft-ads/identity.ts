/**
 * What Microsoft Advertising can match an offline conversion on: the Microsoft click id (msclkid) and, for enhanced
 * conversions, a SHA-256 of the normalised email address and phone number. Raw values never leave this module; only
 * hashes and notes (never containing a value) do.
 *
 * Normalisation follows Microsoft's "Format and hash the data" rules for offline enhanced conversions
 * (https://help.ads.microsoft.com/apex/index/3/en/60178, source advertising/msa-help/hlp_BA_CONC_UET_EnhancedConversions.md)
 * and the worked example of the UET Conversion API guide, whose hashes our tests reproduce
 * (https://learn.microsoft.com/en-us/advertising/guides/uet-conversion-api-integration#hashed-identifiers).
 */
import type { DeliveryInput } from '../destination';
import { identityHasher } from '../hashing';
import { normalizePhoneE164 } from '../../../protocol/identity';

/** The hashed identifiers of one conversion, and why a field that was given could not be used. */
export interface MicrosoftHashedIdentity {
  email: string | null;
  phone: string | null;
  /** One sentence per field given but left out; never the value itself. */
  skipped: string[];
}

/**
 * Microsoft's email normalisation: trim, lower-case, drop spaces and accents, cut a `+alias` before the `@`, remove
 * every period before the `@` (for every domain, not only Gmail), and require one `@` with a dotted domain that neither
 * starts nor ends with a period. Null when what is left is not an address.
 */
export function normalizeEmail(raw: string): string | null {
  const compact = raw
    .trim()
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '') // "Remove any accents": é is e plus a combining mark after NFD
    .replace(/\s/g, '');
  const parts = compact.split('@');
  if (parts.length !== 2) return null;
  const [localRaw, domain] = parts as [string, string];
  const local = localRaw.split('+')[0]!.replace(/\./g, '');
  if (local === '' || !domain.includes('.') || domain.startsWith('.') || domain.endsWith('.')) return null;
  return `${local}@${domain}`;
}

/**
 * A phone number in E.164 (`+`, country code, subscriber number, at most 15 digits) as Microsoft requires before
 * hashing: the shared reader of phones (protocol/identity.ts: separators and a trunk prefix in parentheses dropped, the
 * international `00` read as `+`). A national number is null, because guessing its country would hash someone else's.
 */
export const normalizePhone = normalizePhoneE164;

/** Normalises and hashes email and phone (lower-case hex SHA-256); fields that cannot be normalised are skipped with a note. */
export function hashIdentity(identity: DeliveryInput['identity']): MicrosoftHashedIdentity {
  const skipped: string[] = [];
  const hash = identityHasher(skipped);
  return {
    email: hash('email', identity.email, normalizeEmail, 'not an email address Microsoft can match'),
    phone: hash('phone', identity.phone, normalizePhone, 'not in international E.164 form (+ and country code)'),
    skipped,
  };
}

/**
 * The click id inside a `_uetmsclkid` cookie value. The UET tag stores it as `_uet` followed by the 32-hex id (seen on
 * live sites; Microsoft's UET FAQ only names the cookie and its 90-day life,
 * https://help.ads.microsoft.com/apex/index/3/en/53056). The UET parameter form is read too: Microsoft's UET parameters
 * table (https://learn.microsoft.com/en-us/advertising/msa-help/hlp_ba_conc_uet_parameters_table) documents msclkid as
 * the 32-hex GUID followed by `-1` (new this session) or `-0`, as in `cdd4afcccb1c9a4cad9544dd7e5006d5-1`; `-1N` is
 * accepted as well. `N` alone (cookies blocked, no click) and anything else is null.
 */
export function clickIdFromUetCookie(value: string | undefined): string | null {
  if (value === undefined) return null;
  const match = /^(?:_uet)?([0-9a-f]{32})(?:-[01]N?)?$/i.exec(value.trim());
  return match ? match[1]! : null;
}

/** Where the click id of a conversion came from. */
export type ClickIdSource = 'msclkid' | '_uetmsclkid' | null;

/** The Microsoft click id of an input: the landing's `msclkid`, else the UET tag's `_uetmsclkid` cookie. */
export function microsoftClickId(input: Pick<DeliveryInput, 'clickIds' | 'cookies'>): { clickId: string | null; source: ClickIdSource } {
  const fromUrl = input.clickIds.msclkid?.trim();
  if (fromUrl) return { clickId: fromUrl, source: 'msclkid' };
  const fromCookie = clickIdFromUetCookie(input.cookies._uetmsclkid);
  return fromCookie ? { clickId: fromCookie, source: '_uetmsclkid' } : { clickId: null, source: null };
}
