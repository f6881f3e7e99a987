/**
 * Reading cookies through js-cookie (the design card's cookie layer), values as the browser holds them: platform
 * cookies are passed on as their platform wrote them, and the loader decodes its own where it reads them.
 */
import Cookies from 'js-cookie';

/** js-cookie with a reader that keeps values raw (its default decodes %XX sequences). */
const rawCookies = Cookies.withConverter<string>({ read: (value) => value });

/**
 * A cookie's raw value (first of a repeated name, as the browser orders them), or undefined when absent or unreadable:
 * private modes and blocked storage make document.cookie throw.
 */
export function readCookie(name: string): string | undefined {
  try {
    return rawCookies.get(name);
  } catch {
    return undefined;
  }
}
