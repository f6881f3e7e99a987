/**
 * The hosted connect form for Meta: no OAuth, a dataset (pixel) ID and a Conversions API access token, which Meta
 * recommends generating in Events Manager (it creates a system user for the Conversions API; no App Review and no
 * permission to request). https://developers.facebook.com/documentation/ads-commerce/conversions-api/get-started
 */
import type { ConnectField, ConnectResult, Problem } from '../destination';

/** Test event code used when the user gives none: Meta still checks and counts the test event. */
export const DEFAULT_TEST_EVENT_CODE = 'TEST_CNV';

/** The fields of the hosted page. */
export const META_CONNECT_FIELDS: readonly ConnectField[] = [
  {
    name: 'pixel_id',
    label: 'Dataset (pixel) ID',
    hint: 'In Events Manager, open your dataset (pixel): its ID is the number under its name. Use the same one as your site’s Meta Pixel, so Meta can deduplicate.',
    required: true,
    placeholder: '1234567890123456',
  },
  {
    name: 'access_token',
    label: 'Conversions API access token',
    hint: 'Events Manager → your dataset → Settings → Conversions API → Generate access token. cnv stores it encrypted and never shows it again.',
    required: true,
    secret: true,
  },
  {
    name: 'test_event_code',
    label: 'Test event code (optional)',
    hint: 'From Events Manager → your dataset → Test events. With it, the connection test shows up in that tab.',
    required: false,
    placeholder: 'TEST12345',
  },
];

/** Checks the submitted form; the token becomes an encrypted credential, the dataset ID and test code plain settings. */
export function parseMetaConnectForm(form: Record<string, string>): ConnectResult {
  const errors: Problem[] = [];
  const pixelId = (form.pixel_id ?? '').trim();
  const token = (form.access_token ?? '').trim();
  const testCode = (form.test_event_code ?? '').trim();
  if (pixelId === '') errors.push({ param: 'pixel_id', message: 'Enter the dataset (pixel) ID from Events Manager.' });
  else if (!/^\d{5,20}$/.test(pixelId)) {
    errors.push({ param: 'pixel_id', message: 'A dataset (pixel) ID is a number of digits only, like 1234567890123456.' });
  }
  if (token === '') errors.push({ param: 'access_token', message: 'Paste the Conversions API access token generated in Events Manager.' });
  else if (/\s/.test(token) || token.length < 20) {
    errors.push({ param: 'access_token', message: 'That does not look like an access token: copy the whole token, without spaces.' });
  }
  if (testCode !== '' && !/^[A-Za-z0-9_-]{1,64}$/.test(testCode)) {
    errors.push({ param: 'test_event_code', message: 'A test event code has letters and digits only, like TEST12345.' });
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: { pixel_id: pixelId, ...(testCode ? { test_event_code: testCode } : {}) },
    credentials: { access_token: token },
    summary: `Meta dataset ${pixelId}`,
  };
}
