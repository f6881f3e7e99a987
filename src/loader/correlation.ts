/** The correlation token: the cookie that carries one signup from the browser to the customer's backend. */
import { CORRELATION_COOKIE, CORRELATION_TOKEN_PATTERN } from '../protocol/cookies';
import type { WriteCookie } from './loader-cookies';
import { randomId } from './random-id';
import { readCookies } from './read-cookie';

/**
 * The still-valid token in the correlation cookie, or undefined. A cookie's value is a string or, without the cookie,
 * undefined, which the pattern reads as the text 'undefined': no token.
 */
export const currentToken = (): string | undefined => {
  const current = readCookies()[CORRELATION_COOKIE];
  return CORRELATION_TOKEN_PATTERN.test(current!) ? current : undefined;
};

/**
 * Writes the correlation cookie synchronously and returns its token: the still-valid one already in the cookie (one
 * signup, one token), its expiry refreshed, or a new one. A newer ad click deletes the cookie (see boot), so one token
 * never stands for two clicks.
 */
export const correlate = (ttlSeconds: number, write: WriteCookie): string => {
  const token = currentToken() || randomId();
  write(CORRELATION_COOKIE, token, ttlSeconds);
  return token;
};
