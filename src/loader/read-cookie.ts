/** Reading cookies through js-cookie (the design card's cookie layer). */
import Cookies from 'js-cookie';

/**
 * The page's cookies by name (the first of a repeated name, as the browser orders them), each value decoded by
 * js-cookie (%XX sequences; a cookie that does not decode is left out); {} when cookies are unreadable: private modes
 * and blocked storage make document.cookie throw. One read of document.cookie serves every cookie a caller needs.
 */
export const readCookies = (): Record<string, string> => {
  try {
    return Cookies.get();
  } catch {
    return {};
  }
};
