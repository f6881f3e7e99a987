/**
 * Reading a cookie without throwing: private modes and blocked storage make document.cookie throw. Cookies are read
 * (here) and written (loader-cookies) through document.cookie directly: js-cookie cost 1.4 kB raw (about 580 B gzip)
 * and put the loader over its size budget, and the loader needs only one read and one write path.
 */
import { guard } from './guard';

/** A cookie's raw value (first of a repeated name, as the browser orders them), or undefined when absent or unreadable. */
export const readCookie = guard((name: string): string | undefined => {
  for (const pair of document.cookie.split('; ')) if (pair.startsWith(name + '=')) return pair.slice(name.length + 1);
  return undefined;
});
