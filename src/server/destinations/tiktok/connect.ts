/**
 * The hosted connect form for TikTok: no OAuth, the pixel code and an Events API access token, which TikTok has the
 * advertiser generate in Events Manager (the pixel → Settings → Events API → Generate Access Token). The token is
 * long-lived and stored encrypted; the pixel code is the event source id of every request.
 */
import type { ConnectField, ConnectResult, Problem } from '../destination';

/** Test event code used when the user gives none (the connection test sends a custom event, never a real conversion). */
export const DEFAULT_TEST_EVENT_CODE = 'TEST_CNV';

/** The fields of the hosted page. */
export const TIKTOK_CONNECT_FIELDS: readonly ConnectField[] = [
  {
    name: 'pixel_code',
    label: 'Pixel code',
    hint: 'TikTok Events Manager → Web events: the ID under your pixel’s name (capital letters and digits). Use the same pixel as your site’s TikTok Pixel, so TikTok can deduplicate.',
    required: true,
    placeholder: 'C4A1B2C3D4E5F6G7H8I9',
  },
  {
    name: 'access_token',
    label: 'Events API access token',
    hint: 'Events Manager → your pixel → Settings → Events API → Generate Access Token. cnv stores it encrypted and never shows it again.',
    required: true,
    secret: true,
  },
  {
    name: 'test_event_code',
    label: 'Test event code (optional)',
    hint: 'Events Manager → your pixel → Test events. With it, the connection test shows up in that tab.',
    required: false,
    placeholder: 'TEST12345',
  },
];

/** Checks the submitted form; the token becomes an encrypted credential, the pixel code and test code plain settings. */
export function parseTikTokConnectForm(form: Record<string, string>): ConnectResult {
  const errors: Problem[] = [];
  const pixelCode = (form.pixel_code ?? '').trim().toUpperCase();
  const token = (form.access_token ?? '').trim();
  const testCode = (form.test_event_code ?? '').trim();
  if (pixelCode === '') errors.push({ param: 'pixel_code', message: 'Enter the pixel code from TikTok Events Manager.' });
  else if (!/^[A-Z0-9]{10,40}$/.test(pixelCode)) {
    errors.push({ param: 'pixel_code', message: 'A pixel code has capital letters and digits only, like C4A1B2C3D4E5F6G7H8I9.' });
  }
  if (token === '') errors.push({ param: 'access_token', message: 'Paste the Events API access token generated in Events Manager.' });
  else if (/\s/.test(token) || token.length < 20 || token.length > 512) {
    errors.push({ param: 'access_token', message: 'That does not look like an access token: copy the whole token, without spaces.' });
  }
  if (testCode !== '' && !/^[A-Za-z0-9_-]{1,64}$/.test(testCode)) {
    errors.push({ param: 'test_event_code', message: 'A test event code has letters and digits only, like TEST12345.' });
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: { pixel_code: pixelCode, ...(testCode ? { test_event_code: testCode } : {}) },
    credentials: { access_token: token },
    summary: `TikTok pixel ${pixelCode}`,
  };
}
