/** Ad platforms' own first-party cookies (Meta, Google, TikTok, Microsoft, Reddit, LinkedIn), read at snapshot time. */
import type { Snapshot } from '../protocol/collector';
import { PLATFORM_COOKIES } from '../protocol/signals';
import { cleanValue } from './click-signals';
import { readCookies } from './read-cookie';

/** The platform cookies present on the page, values as the platform wrote them, trimmed and capped like URL signals. */
export const readPlatformCookies = (): Snapshot['cookies'] => {
  const found: Snapshot['cookies'] = {};
  const jar = readCookies();
  for (const name of PLATFORM_COOKIES) {
    const value = cleanValue(jar[name] || '');
    if (value) found[name] = value;
  }
  return found;
};
