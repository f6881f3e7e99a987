/**
 * Cookie and sessionStorage access that never throws: private modes and blocked storage make the accessors throw.
 * Cookies are read and written through document.cookie directly: js-cookie cost 1.4 kB raw (about 580 B gzip) and
 * put the loader over its size budget, and the loader needs only one read and one write path.
 */
import { guard } from './guard';

/** A cookie's raw value (first of a repeated name, as the browser orders them), or undefined when absent or unreadable. */
export const readCookie = guard((name: string): string | undefined => {
  for (const pair of document.cookie.split('; ')) if (pair.startsWith(name + '=')) return pair.slice(name.length + 1);
  return undefined;
});

/** Sets one cookie from its `name=value;attributes` string; does nothing when cookies cannot be written. */
export const writeCookie = guard((cookie: string) => {
  document.cookie = cookie;
});

/** A sessionStorage item, or undefined/null when absent or storage is unavailable. */
export const readSession = guard((key: string) => sessionStorage.getItem(key));

/** Stores a sessionStorage item; does nothing when storage is unavailable or full. */
export const writeSession = guard((key: string, value: string) => sessionStorage.setItem(key, value));
