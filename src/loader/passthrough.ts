/**
 * URL passthrough (data-url-passthrough), after Google's url_passthrough: while consent is not given, the landing's
 * click ids and UTM parameters ride along on same-site links, so the click reaches the page where consent is given.
 * Nothing is written to the device and nothing is sent.
 */
import type { Touch } from '../protocol/collector';

/**
 * Adds the touch's click ids and UTM parameters to url, leaving any parameter the URL already has alone. Only the
 * touch's own entries: a for…in would also walk what a page added to Object.prototype.
 */
export const passThrough = (url: URL, touch: Touch): void => {
  const params = url.searchParams;
  for (const [key, value] of Object.entries({ ...touch.click_ids, ...touch.utm })) if (!params.has(key)) params.set(key, value);
};
