/**
 * The hosted connect form for Meta: no OAuth, a dataset (pixel) ID and a Conversions API access token, which Meta
 * recommends generating in Events Manager (it creates a system user for the Conversions API; no App Review and no
 * permission to request). https://developers.facebook.com/documentation/ads-commerce/conversions-api/get-started
 */
import type { ConnectField, ConnectResult } from '../destination';
import { limitedDataUseField } from '../limited-data-use';
import { parseTokenForm, type TokenFormRules } from '../token-form';

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
  limitedDataUseField(
    'On: every conversion goes to Meta as Limited Data Use. For people in the US states where Meta offers it, Meta then acts as your service provider under its State-Specific Terms, locating each event itself; retargeting and measurement are limited for them.',
  ),
];

const META_FORM: TokenFormRules = {
  label: 'Meta dataset',
  pixel: { field: 'pixel_id', pattern: /^\d{5,20}$/, missing: 'Enter the dataset (pixel) ID from Events Manager.', invalid: 'A dataset (pixel) ID is a number of digits only, like 1234567890123456.' },
  token: { name: 'access token', missing: 'Paste the Conversions API access token generated in Events Manager.' },
  limitedDataUse: true,
};

/** Checks the submitted form; the token becomes an encrypted credential, the dataset ID and test code plain settings. */
export const parseMetaConnectForm = (form: Record<string, string>): ConnectResult => parseTokenForm(META_FORM, form);
