/** Ad click signals of a page URL: click ids and UTM parameters, gathered into a touch. */
import type { Touch } from '../protocol/collector';
import { CLICK_ID_KEYS, SIGNAL_VALUE_MAX, UTM_KEYS } from '../protocol/signals';
import { shrink } from './shrink';

/**
 * Largest touch kept, in characters of its URL-encoded JSON: it must fit a cookie (4096 bytes with the name). Written
 * as a checked literal where readTouch reads it (esbuild inlines no exported constant).
 */
export const TOUCH_MAX = 3800;

/**
 * A signal value as stored: trimmed and capped at SIGNAL_VALUE_MAX characters (UTF-16 code units, as the collector
 * counts them) without splitting a surrogate pair: a high surrogate the cap left alone at the end goes too.
 */
export const cleanValue = (value: string): string => {
  return value.trim().slice(0, SIGNAL_VALUE_MAX).replace(/[\ud800-\udbff]$/, '');
};

/** A URL without its query and fragment, capped like a signal value: what remains when its details must go. */
export const withoutQuery = (url: string): string => {
  return cleanValue(url.split(/[?#]/)[0]!);
};

/**
 * The query parameters of a URL string, read with URLSearchParams (no URL parsing needed): the URL less everything
 * up to its `?` and less its fragment.
 */
export const queryOf = (url: string): URLSearchParams => {
  return new URLSearchParams(url.replace(/^[^?#]*\??|#.*/g, ''));
};

/** Whether a touch carries a click id: an ad touch, which no UTM-only visit ever replaces. */
export const isAdTouch = (touch: Touch | null | undefined): boolean => {
  return !!touch && Object.keys(touch.click_ids).length > 0;
};

/**
 * The touch a URL carries: its click ids and UTM parameters (keys matched case-insensitively and stored lower-case,
 * the first of a repeated key wins, empty values skipped), or null when it carries none. The landing URL is kept
 * without its query and fragment: what attribution needs of them is in the click ids and UTM set, and the rest (a mail
 * campaign's `?email=`, a sign-in's token) would sit in the visitor's cookie for weeks, sent with every request to the
 * site. A touch too big for a cookie loses its referrer, then its UTM set; one whose click ids alone are too big is
 * dropped.
 */
export const readTouch = (url: string): Touch | null => {
  const touch: Touch = {
    click_ids: {},
    utm: {},
    landing_page_url: withoutQuery(url),
    referrer: document.referrer || null,
    captured_at: new Date().toISOString(),
  };
  let found: unknown;
  queryOf(url).forEach((raw, name) => {
    const key = name.toLowerCase();
    const value = cleanValue(raw);
    const bag: Record<string, string> | false = (CLICK_ID_KEYS as readonly string[]).includes(key)
      ? touch.click_ids
      : (UTM_KEYS as readonly string[]).includes(key) && touch.utm;
    if (bag && value && !bag[key]) found = bag[key] = value;
  });
  return found &&
    shrink(touch, 3800 satisfies typeof TOUCH_MAX, (json) => encodeURIComponent(json).length, [
      (t) => (t.referrer = null),
      (t) => (t.utm = {}),
    ])
    ? touch
    : null;
};
