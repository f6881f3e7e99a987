/**
 * Meta's customer information parameters: email, phone and names normalised the way Meta documents them, then SHA-256
 * hashed; the click id (`fbc`) and browser id (`fbp`) as Meta builds them. Raw identity never leaves this module: only
 * hashes and sentences naming a skipped field (never its value).
 *
 * Rules: https://developers.facebook.com/documentation/ads-commerce/conversions-api/parameters/customer-information-parameters
 * and Meta's own normaliser, facebook/capi-param-builder (piiUtil: names lose whitespace and punctuation, phones keep
 * digits and lose leading zeros).
 */
import type { RawIdentity } from '../../../protocol/identity';
import { internationalDigits } from '../browser-signals';
import { identityHasher } from '../hashing';

/** Hashed `user_data` fields, and one sentence per given field that could not be used. */
export interface MetaHashedIdentity {
  em: string | null;
  ph: string | null;
  fn: string | null;
  ln: string | null;
  skipped: string[];
}

/**
 * Meta's email rule: trim and lower-case, nothing more (unlike Google, no removal of dots in gmail addresses).
 * Null when it is not an address (one `@` with text both sides, no inner whitespace).
 */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  const at = email.indexOf('@');
  if (at <= 0 || at !== email.lastIndexOf('@') || at === email.length - 1 || /\s/.test(email)) return null;
  if (!email.slice(at + 1).includes('.')) return null;
  return email;
}

/**
 * Meta's phone rule: digits only, no leading zeros, and the country code included ("Always include the country code").
 * cnv knows the country only when the number says it: a leading `+`, or the international prefix `00`. A national
 * number (`(650) 555-1212`) is null rather than hashed with a guessed country, which would match someone else.
 */
export function normalizePhone(raw: string): string | null {
  return internationalDigits(raw);
}

/**
 * Meta's name rule: lower-case, no punctuation, UTF-8 kept as it is ("Valéry" → "valéry", "정" → "정"). Like Meta's
 * normaliser, whitespace goes too ("Mary Ann" → "maryann"); Unicode punctuation (a typographic apostrophe) counts as
 * punctuation. NFC first, so a decomposed "é" hashes like a composed one.
 */
export function normalizeName(raw: string): string | null {
  const name = raw.normalize('NFC').toLowerCase().replace(/[\s\p{P}\p{S}]+/gu, '');
  return name === '' ? null : name;
}

/** Normalises and hashes email, phone, first and last name for Meta; fields that cannot be normalised are skipped with a note. */
export function hashIdentityForMeta(identity: RawIdentity): MetaHashedIdentity {
  const skipped: string[] = [];
  const hashed = identityHasher(skipped);
  return {
    em: hashed('email', identity.email, normalizeEmail, 'not an email address'),
    ph: hashed(
      'phone',
      identity.phone,
      normalizePhone,
      'the country code is missing (start the number with + and the country code) or it is not a phone number',
    ),
    fn: hashed('first_name', identity.first_name, normalizeName, 'nothing left after removing punctuation'),
    ln: hashed('last_name', identity.last_name, normalizeName, 'nothing left after removing punctuation'),
    skipped,
  };
}

/** Where an `fbc` value came from: the Pixel's (or the site's) `_fbc` cookie, or built by cnv from the landing's fbclid. */
export type FbcSource = 'cookie' | 'fbclid';

// fb.<subdomainIndex>.<creationTime ms>.<value>; the value may itself contain dots. Meta's parameter builder may append
// an appendix, which stays part of the value: cnv passes the cookie on unmodified, as Meta asks.
const FB_COOKIE = /^fb\.\d\.\d{10,13}\.\S+$/;

/** True when a value has the `fb.<subdomain index>.<creation time>.<id>` shape of `_fbc` and `_fbp`. */
export function isFbCookieValue(value: string): boolean {
  return FB_COOKIE.test(value);
}

/** The creation time (ms) and the rest (the click id, with any appendix) of an `_fbc` value of Meta's shape. */
function fbcParts(value: string): { createdMs: number; rest: string } {
  const [, , time, ...rest] = value.split('.');
  const n = Number(time);
  // Meta's creationTime is in milliseconds; a value of 10 digits was written in seconds by hand-written code.
  return { createdMs: n < 1e12 ? n * 1000 : n, rest: rest.join('.') };
}

/**
 * The `fbc` click id: the `_fbc` cookie as it is ("Do not modify the creationTime from the _fbc cookie"), else built
 * from the landing's `fbclid` as `fb.1.<when the click was first seen, ms>.<fbclid>`, case kept ("ClickID value is case
 * sensitive"). Subdomain index 1 is what Meta says to use for a value generated on a server.
 *
 * When both are there and hold different clicks, the newer one goes: Meta recommends "refreshing a user's profile
 * with the latest value whenever possible", and either can be the newer (a Meta click landing where only cnv's loader
 * runs leaves an older `_fbc`; one landing where only the Pixel runs leaves cnv an older fbclid). The cookie's
 * creation time is weighed against when cnv first saw the fbclid; a tie keeps the cookie.
 * https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/fbp-and-fbc
 */
export function buildFbc(
  cookies: Readonly<Record<string, string>>,
  clickIds: Readonly<Record<string, string>>,
  firstSeenAt: Date,
): { value: string; source: FbcSource } | null {
  const raw = cookies._fbc?.trim();
  const cookie = raw && isFbCookieValue(raw) ? raw : null;
  const fbclid = clickIds.fbclid?.trim();
  const built = fbclid && !/\s/.test(fbclid) ? `fb.1.${firstSeenAt.getTime()}.${fbclid}` : null;
  if (cookie && built) {
    const { createdMs, rest } = fbcParts(cookie);
    const sameClick = rest === fbclid || rest.startsWith(`${fbclid}.`);
    if (!sameClick && firstSeenAt.getTime() > createdMs) return { value: built, source: 'fbclid' };
  }
  if (cookie) return { value: cookie, source: 'cookie' };
  return built ? { value: built, source: 'fbclid' } : null;
}

/** The `fbp` browser id: the `_fbp` cookie the Meta Pixel wrote, when it has Meta's shape; cnv never invents one. */
export function fbpFromCookies(cookies: Readonly<Record<string, string>>): string | null {
  const cookie = cookies._fbp?.trim();
  return cookie && isFbCookieValue(cookie) ? cookie : null;
}
