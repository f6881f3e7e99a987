/**
 * The hosted connect form for Reddit: the pixel ID, and a conversion access token generated in Reddit Events Manager
 * (Conversions API → Generate Access Token), Reddit's recommended credential for the Conversions API (./index.ts).
 * After the optional sign-in with Reddit (./oauth.ts) the token field is not shown: the refresh token is the credential.
 */
import type { ConnectContext, ConnectField, ConnectResult } from '../destination';
import { parseTokenForm, type TokenFormRules } from '../token-form';

/** The fields of the hosted page. */
export const REDDIT_CONNECT_FIELDS: readonly ConnectField[] = [
  {
    name: 'pixel_id',
    label: 'Pixel ID',
    hint: 'Reddit Events Manager: the ID of your pixel (it starts with a2_ or t2_). Use the same pixel as your site’s Reddit Pixel, so Reddit can deduplicate.',
    required: true,
    placeholder: 'a2_abc123xyz',
  },
  {
    name: 'access_token',
    label: 'Conversion access token',
    hint: 'Events Manager → Conversions API → Generate Access Token. It does not expire; cnv stores it encrypted and never shows it again.',
    required: true,
    secret: true,
    withoutSignIn: true,
  },
  {
    name: 'test_id',
    label: 'Event Testing id (optional)',
    hint: 'Events Manager → Event Testing. Used only by the connection test, so its event shows in Event Testing; conversions never carry it.',
    required: false,
    placeholder: 't2_abc123',
  },
];

const REDDIT_FORM: TokenFormRules = {
  label: 'Reddit pixel',
  pixel: { field: 'pixel_id', pattern: /^(a2|t2)_[A-Za-z0-9]{3,40}$/, missing: 'Enter the pixel ID from Reddit Events Manager.', invalid: 'A Reddit pixel ID starts with a2_ or t2_ followed by letters and digits, like a2_abc123xyz.' },
  token: { name: 'conversion access token', missing: 'Paste the conversion access token generated in Events Manager.' },
  test: { field: 'test_id', invalid: 'An Event Testing id has letters, digits and underscores only, like t2_abc123.' },
};

/**
 * Checks the submitted form; the token becomes an encrypted credential, the pixel ID and test id plain settings. Signed
 * in with Reddit, no token is asked for (a pasted one is ignored): the sign-in's refresh token is the credential.
 */
export const parseRedditConnectForm = (form: Record<string, string>, context?: ConnectContext): ConnectResult => parseTokenForm(REDDIT_FORM, form, context);
