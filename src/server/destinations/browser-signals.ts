/** Reading what the browser gave a conversion (a click id, a platform cookie, the page URL) in the shape platforms take. */
import { TRUNK_PREFIX } from '../../protocol/identity';

/** A click id or cookie value, trimmed; null when absent, blank, or holding whitespace (never a valid id). */
export function signalValue(values: Readonly<Record<string, string>>, key: string): string | null {
  const value = values[key]?.trim();
  return value && !/\s/.test(value) ? value : null;
}

/** The page URL when it is an http(s) URL (what platforms take as the event's source URL); null otherwise. */
export function httpUrlOrNull(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? value : null;
  } catch {
    return null;
  }
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
