/**
 * Binds a handoff's OAuth sign-in to the browser that started it (RFC 6749 §10.12, login CSRF). `/authorize` sets a
 * cookie on that browser; the platform's callback is accepted only from a browser that presents it. Without it, whoever
 * holds a handoff link could start the sign-in, send the platform's consent URL to someone signed in at the platform,
 * and have that person's grant stored on their own handoff.
 *
 * The cookie is named after the state (so several sign-ins at once, in several tabs, keep their own) and holds when it
 * was issued and an HMAC of the state and that time under the service's secret key: nothing is stored, nothing secret is
 * in it, and no one without the key can make one for a state. HttpOnly, SameSite=Lax (a top-level GET back from the
 * platform carries it; a cross-site subrequest does not), Secure on https, scoped to `/handoffs`, and good for as long
 * as the sign-in may take.
 */
import { timingSafeEqual } from 'node:crypto';
import { serviceKeyedHash } from '../../db/secret-box';
import type { Settings } from '../../settings';

/** How long a sign-in at the platform may take, from `/authorize` to the callback, in the browser that started it. */
export const OAUTH_SIGN_IN_TTL_MS = 60 * 60 * 1000;

/** The path the cookie is sent on: the hosted pages and the OAuth callback, nothing else. */
const COOKIE_PATH = '/handoffs';
const COOKIE_PREFIX = 'cnv_handoff_oauth_';

/** The cookie of one sign-in (its state): named after the state's first characters, so each sign-in has its own. */
export function oauthBrowserCookieName(state: string): string {
  return `${COOKIE_PREFIX}${state.slice(0, 12)}`;
}

function proof(settings: Settings, state: string, issuedAt: number): string {
  return serviceKeyedHash(settings, 'handoff oauth browser')(`${state}.${issuedAt}`);
}

/** The Set-Cookie value that binds this state to the browser it is sent to. */
export function oauthBrowserCookie(settings: Settings, state: string, options: { secure: boolean; now?: Date; maxAgeMs?: number }): string {
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const maxAge = Math.max(0, Math.floor(Math.min(options.maxAgeMs ?? OAUTH_SIGN_IN_TTL_MS, OAUTH_SIGN_IN_TTL_MS) / 1000));
  return cookieAttributes(oauthBrowserCookieName(state), `${issuedAt}.${proof(settings, state, issuedAt)}`, maxAge, options.secure);
}

/** The Set-Cookie value that removes this state's cookie (once the callback used it). */
export function clearedOAuthBrowserCookie(state: string, secure: boolean): string {
  return cookieAttributes(oauthBrowserCookieName(state), '', 0, secure);
}

function cookieAttributes(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** Whether a cookie value (from the callback's request) is the one `/authorize` gave for this state, and still fresh. */
export function oauthBrowserCookieValid(settings: Settings, state: string, value: string | undefined, now: Date = new Date()): boolean {
  const match = /^(\d{1,12})\.([0-9a-f]{64})$/.exec(value ?? '');
  if (!match) return false;
  const issuedAt = Number(match[1]);
  const age = now.getTime() - issuedAt * 1000;
  if (age < -60_000 || age > OAUTH_SIGN_IN_TTL_MS) return false;
  const expected = Buffer.from(proof(settings, state, issuedAt));
  const given = Buffer.from(match[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
