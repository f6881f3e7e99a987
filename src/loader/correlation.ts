/** The correlation token: the cookie that carries one signup from the browser to the customer's backend. */
import { CORRELATION_COOKIE, isCorrelationToken } from '../protocol/cookies';
import type { WriteCookie } from './loader-cookies';
import { readCookie } from './read-cookie';

/** A new token: 16 bytes from crypto.getRandomValues as 22 base64url characters (the 24 of base64 less its padding). */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).slice(0, 22).replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * Writes the correlation cookie synchronously and returns its token: the still-valid one already in the cookie (one
 * signup, one token), its expiry refreshed, or a new one.
 */
export function correlate(ttlSeconds: number, write: WriteCookie): string {
  const current = readCookie(CORRELATION_COOKIE);
  const token = isCorrelationToken(current) ? current : newToken();
  write(CORRELATION_COOKIE, token, ttlSeconds);
  return token;
}
