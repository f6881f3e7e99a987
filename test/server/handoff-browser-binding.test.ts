/** The cookie that binds a handoff's OAuth sign-in to the browser that started it (browser-binding.ts). */
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/server/settings';
import {
  OAUTH_SIGN_IN_TTL_MS,
  oauthBrowserCookie,
  oauthBrowserCookieName,
  oauthBrowserCookieValid,
} from '../../src/server/api/handoffs/browser-binding';

const settings = loadSettings({ CNV_SECRET_KEY: 'b'.repeat(64), CNV_PUBLIC_URL: 'https://api.cnv.test' });
const otherKey = loadSettings({ CNV_SECRET_KEY: 'c'.repeat(64), CNV_PUBLIC_URL: 'https://api.cnv.test' });
const STATE = 'AbCdEfGhIjKlMnOpQrStUv1234';
const now = new Date('2026-03-01T10:00:00Z');
const valueOf = (setCookie: string) => setCookie.split(';')[0]!.split('=')[1]!;

describe('binding a sign-in to its browser', () => {
  it('accepts the value it set for this state, within the sign-in time, and nothing else', () => {
    const value = valueOf(oauthBrowserCookie(settings, STATE, { secure: true, now }));
    expect(oauthBrowserCookieValid(settings, STATE, value, new Date(now.getTime() + 5 * 60_000))).toBe(true);
    expect(oauthBrowserCookieValid(settings, STATE, value, new Date(now.getTime() + OAUTH_SIGN_IN_TTL_MS + 1000))).toBe(false); // stale
    expect(oauthBrowserCookieValid(settings, `${STATE}x`, value, now)).toBe(false); // another state
    expect(oauthBrowserCookieValid(otherKey, STATE, value, now)).toBe(false); // another service key
    expect(oauthBrowserCookieValid(settings, STATE, undefined, now)).toBe(false);
    expect(oauthBrowserCookieValid(settings, STATE, '', now)).toBe(false);
    const [issued] = value.split('.');
    expect(oauthBrowserCookieValid(settings, STATE, `${Number(issued) + 600}.${value.split('.')[1]}`, now)).toBe(false); // time altered
  });

  it('is named per sign-in, scoped to /handoffs, HttpOnly, SameSite=Lax, Secure only on https, no longer than the link', () => {
    expect(oauthBrowserCookieName(STATE)).toBe('cnv_handoff_oauth_AbCdEfGhIjKl');
    expect(oauthBrowserCookie(settings, STATE, { secure: false, now })).toMatch(/^cnv_handoff_oauth_AbCdEfGhIjKl=\d+\.[0-9a-f]{64}; Path=\/handoffs; HttpOnly; SameSite=Lax; Max-Age=3600$/);
    expect(oauthBrowserCookie(settings, STATE, { secure: true, now, maxAgeMs: 90_000 })).toMatch(/; Max-Age=90; Secure$/);
  });
});
