/** Cookie names and lifetimes shared by the loader (writer), the service and the client (readers). */

/** The short-lived cookie that carries the signup correlation token from the browser to the customer's backend. */
export const CORRELATION_COOKIE = 'cnv_signup_correlation';

/** The first-party cookie holding the latest ad touch (click ids, UTM, landing). */
export const CLICK_COOKIE = 'cnv_click';

/** How long the latest touch is kept, in days. */
export const CLICK_COOKIE_DAYS = 90;

/** Default lifetime of the correlation cookie when the site config does not say. */
export const DEFAULT_CORRELATION_TTL_SECONDS = 1800;

/** A correlation token: 16 random bytes as 22 base64url characters. */
export const CORRELATION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/** Whether a string has the shape of a correlation token. */
export const isCorrelationToken = (value: unknown): value is string => {
  return typeof value === 'string' && CORRELATION_TOKEN_PATTERN.test(value);
};
