/**
 * The hosted connect form for TikTok: no OAuth, the pixel code and an Events API access token, which TikTok has the
 * advertiser generate in Events Manager (the pixel → Settings → Events API → Generate Access Token). The token is
 * long-lived and stored encrypted; the pixel code is the event source id of every request.
 */
import type { ConnectField, ConnectResult } from '../destination';
import { limitedDataUseField } from '../limited-data-use';
import { parseTokenForm, type TokenFormRules } from '../token-form';

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
  limitedDataUseField('On: every conversion goes to TikTok as Limited Data Use, and TikTok limits how it uses the data of people in the US states where that applies.'),
];

const TIKTOK_FORM: TokenFormRules = {
  label: 'TikTok pixel',
  pixel: { field: 'pixel_code', normalize: (raw) => raw.toUpperCase(), pattern: /^[A-Z0-9]{10,40}$/, missing: 'Enter the pixel code from TikTok Events Manager.', invalid: 'A pixel code has capital letters and digits only, like C4A1B2C3D4E5F6G7H8I9.' },
  token: { name: 'access token', missing: 'Paste the Events API access token generated in Events Manager.', maxLength: 512 },
  limitedDataUse: true,
};

/** Checks the submitted form; the token becomes an encrypted credential, the pixel code and test code plain settings. */
export const parseTikTokConnectForm = (form: Record<string, string>): ConnectResult => parseTokenForm(TIKTOK_FORM, form);
