/** The latest touch, kept whole in the first-party cookie cnv_click so a signup days later still has it. */
import type { Touch } from '../protocol/collector';
import { CLICK_COOKIE, CLICK_COOKIE_DAYS } from '../protocol/cookies';
import type { WriteCookie } from './loader-cookies';
import { guard } from './guard';
import { readCookie } from './read-cookie';

/** Replaces the stored touch (a new click never mixes with an old one's UTMs) for CLICK_COOKIE_DAYS. */
export function storeTouch(touch: Touch, write: WriteCookie): void {
  write(CLICK_COOKIE, encodeURIComponent(JSON.stringify(touch)), CLICK_COOKIE_DAYS * 86400);
}

/** The stored touch; undefined when there is none or it does not parse (the collector validates its shape). */
export const storedTouch = guard((): Touch => JSON.parse(decodeURIComponent(readCookie(CLICK_COOKIE)!)));
