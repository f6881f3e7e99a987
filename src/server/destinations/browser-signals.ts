/** Reading what the browser gave a conversion (a click id, a platform cookie, the page URL) in the shape platforms take. */
import { TRUNK_PREFIX } from '../../protocol/identity';
import { decodeUrlComponent } from '../http/url-component';

/** A click id or cookie value, trimmed; null when absent, blank, or holding whitespace (never a valid id). */
export function signalValue(values: Readonly<Record<string, string>>, key: string): string | null {
  const value = values[key]?.trim();
  return value && !/\s/.test(value) ? value : null;
}

/**
 * Query parameter names that carry a person's contact details or name, compared lower-cased without `_`, `-` and `.`
 * (`?email=`, `?user_email=`, `?Phone=`, `?first-name=`): what a mail campaign's link or a prefilled signup form puts
 * in the address.
 */
const PERSONAL_PARAMETERS = new Set([
  'email', 'mail', 'emailaddress', 'useremail', 'contactemail', 'phone', 'phonenumber', 'tel', 'telephone', 'mobile',
  'firstname', 'lastname', 'fname', 'lname', 'fullname', 'name',
]);

/** An email address, or a phone number written with its country code (`+44 20 …`, `0044…`). */
const PERSONAL_VALUE = /[^\s@]+@[^\s@]+\.[^\s@]+|^\s*(?:\+|00)\d[\d\s().-]{6,}\d\s*$/;

/** A query name, value or path as text; as it is when it is not percent-encoded UTF-8. */
const decoded = (raw: string): string => decodeUrlComponent(raw, true) ?? raw;

/**
 * The page URL as cnv sends it to a platform (Meta's `event_source_url`, TikTok's `page.url`, Reddit's
 * `event_source_url`), or null when it is not an http(s) URL. The platforms get hashes of a person's contact details,
 * never the details ("Our systems are designed to not accept customer information that is unhashed Contact
 * Information", Meta, Customer Information Parameters): so the address loses what would carry them in clear, a query
 * parameter named for a contact detail or a name, or whose value is an email address or an international phone
 * number (`?email=ada%40example.com` from a mail campaign's link), a path that holds an email address, its user name and
 * password, and its fragment (never sent by a browser, and where sign-in flows put tokens). Every other parameter
 * (click ids, UTM, a plan) stays as the browser had it.
 */
export function pageUrlForPlatform(value: string | null | undefined): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const withoutFragment = value.split('#')[0]!;
  const mark = withoutFragment.indexOf('?');
  const query = mark < 0 ? '' : withoutFragment.slice(mark + 1);
  const kept = query.split('&').filter((pair) => {
    if (pair === '') return false;
    const equals = pair.indexOf('=');
    const name = decoded(equals < 0 ? pair : pair.slice(0, equals));
    const parameterValue = equals < 0 ? '' : decoded(pair.slice(equals + 1));
    return !PERSONAL_PARAMETERS.has(name.toLowerCase().replace(/[-_.\s]/g, '')) && !PERSONAL_VALUE.test(name) && !PERSONAL_VALUE.test(parameterValue);
  });
  // An address in the path (`/invite/ada@example.com`) takes the path with it.
  const path = PERSONAL_VALUE.test(decoded(url.pathname)) ? '/' : url.pathname;
  return `${url.origin}${path}${kept.length > 0 ? `?${kept.join('&')}` : ''}`;
}

/**
 * The digits of a phone number given with its country code (a leading `+` or the international prefix `00`), without
 * leading zeros: what Meta hashes, and (after a `+`) the E.164 form Reddit and TikTok hash. Null for a national
 * number (hashing it with a guessed country would match someone else), letters, or a length E.164 does not allow.
 * A trunk prefix in parentheses (`+44 (0)20 7946 0958`) is no digit of the number, as for every other reader of a phone.
 */
export function internationalDigits(raw: string): string | null {
  const text = raw.trim().replace(TRUNK_PREFIX, '');
  if (!text.startsWith('+') && !text.startsWith('00')) return null;
  if (/[^\d\s\-.()+/\u00a0]/.test(text)) return null;
  const digits = text.replace(/\D/g, '').replace(/^0+/, '');
  return digits.length >= 7 && digits.length <= 15 ? digits : null;
}
