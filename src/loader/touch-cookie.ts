/** The touch that wins, kept whole in the first-party cookie cnv_click so a signup days later still has it. */
import type { Touch } from '../protocol/collector';
import { CLICK_COOKIE, CLICK_COOKIE_DAYS } from '../protocol/cookies';
import { isAdTouch } from './click-signals';
import type { WriteCookie } from './loader-cookies';
import { readCookies } from './read-cookie';

/** A touch's click ids and UTMs (never the same keys), in one order whatever the URL's: the same click, the same text. */
const signals = (touch: Touch): string => JSON.stringify(Object.entries({ ...touch.click_ids, ...touch.utm }).sort());

/**
 * Which of the stored touch and a fresh one to keep. An ad touch (any click id) beats a touch without one, whatever
 * came later: ad platforms credit the last ad click, not the newsletter visit after it. Between two of the same kind the
 * newer `captured_at` wins, whole (a new click never mixes with an old campaign's UTMs); so does the fresh one over a
 * stored time still in the future of the visitor's clock (stored while it ran ahead: it would otherwise beat every
 * click until the clock passed it). A tie keeps the stored one, and so does the same click read again (a reload, a
 * route change that keeps the query: its token and landing page stay).
 *
 * `revisit`: the fresh touch was read on a page that is no new arrival (a reload, a back/forward load, a restored
 * session, a single-page app's popstate: start.ts). Its `captured_at` says when it was read again, not when its click
 * happened, which may be before the stored one's (tab A's click, then tab B's, then tab A reloaded): it never counts
 * as newer. It is kept only where any touch would be: nothing stored (its first load was before consent, the cookie was
 * cleared), or an ad touch over a stored non-ad one. The same click reloaded keeps the stored one, as above.
 */
export const preferredTouch = <T extends Touch>(
  stored: T | null | undefined,
  fresh: T | null | undefined,
  revisit?: boolean,
): T | null => {
  if (!stored || !fresh) return stored || fresh || null;
  const ad = isAdTouch(fresh);
  if (ad !== isAdTouch(stored)) return ad ? fresh : stored;
  const newer = !revisit && (fresh.captured_at > stored.captured_at || stored.captured_at > new Date().toISOString());
  return newer && signals(fresh) !== signals(stored) ? fresh : stored;
};

/** Writes the touch to cnv_click for CLICK_COOKIE_DAYS, replacing what was there. */
export const storeTouch = (touch: Touch, write: WriteCookie): void => {
  write(CLICK_COOKIE, JSON.stringify(touch), CLICK_COOKIE_DAYS * 86400);
};

/**
 * The stored touch, from the page's cookies (read now unless a caller already read them); undefined when there is none,
 * it does not parse, or it is JSON but no touch (`{}`, `1`, `null`: a damaged or foreign cookie, which must neither
 * stop the capture of new clicks nor go out as a snapshot's touch the collector refuses). The collector checks the rest.
 */
export const storedTouch = (cookies: Record<string, string> = readCookies()): Touch | undefined => {
  try {
    const touch = JSON.parse(cookies[CLICK_COOKIE]!);
    if (touch.click_ids) return touch;
  } catch {
    // no cookie, or not JSON (or JSON null): undefined
  }
};
