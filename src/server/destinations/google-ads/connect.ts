/** Google Ads as a destination: the customer id form of the consent screen and the checks of a flow's action. */
import { conversionActionResourceName, normalizeCustomerId } from './legacy-request';
import type { ConnectResult, DestinationKind, Problem } from '../kinds';
import { isObject, type JsonObject } from '../../http/input';

/** A Google Ads customer id: 10 digits, written with or without the dashes Google shows (123-456-7890). */
export function parseGoogleAdsCustomerId(value: string): string | null {
  const digits = value.replace(/[\s-]/g, '');
  return /^\d{10}$/.test(digits) ? digits : null;
}

function parseForm(form: Record<string, string>): ConnectResult {
  const errors: Problem[] = [];
  const customerRaw = (form.customer_id ?? '').trim();
  const customerId = parseGoogleAdsCustomerId(customerRaw);
  if (!customerRaw) errors.push({ param: 'customer_id', message: 'Enter the Google Ads customer ID.' });
  else if (!customerId) errors.push({ param: 'customer_id', message: 'A customer ID has 10 digits, for example 123-456-7890.' });
  const loginRaw = (form.login_customer_id ?? '').trim();
  const loginCustomerId = loginRaw ? parseGoogleAdsCustomerId(loginRaw) : null;
  if (loginRaw && !loginCustomerId) {
    errors.push({ param: 'login_customer_id', message: 'A manager account ID has 10 digits, for example 987-654-3210.' });
  }
  const accessToken = (form.access_token ?? '').trim();
  if (accessToken && (accessToken.length > 4096 || /\s/.test(accessToken))) {
    errors.push({ param: 'access_token', message: 'An OAuth access token is one word of at most 4096 characters.' });
  }
  if (errors.length > 0 || !customerId) return { ok: false, errors };
  return {
    ok: true,
    // Keys as the Google Ads delivery adapter reads them (delivery/google-ads-request.ts readGoogleAdsSettings).
    settings: { customer_id: customerId, login_customer_id: loginCustomerId, ...(accessToken ? { access_token: accessToken } : {}) },
    summary: `Google Ads customer ${customerId.replace(/^(\d{3})(\d{3})(\d{4})$/, '$1-$2-$3')}`,
  };
}

function checkAction(config: JsonObject, param: string, settings: Record<string, unknown>): Problem[] {
  const conversion = config.conversion;
  const idParam = `${param}.conversion.id`;
  if (!isObject(conversion)) {
    return [{ param: `${param}.conversion`, message: `${param}.conversion must be an object with the id of the Google Ads conversion action to fire.` }];
  }
  const id = conversion.id;
  if (typeof id !== 'string' || id.trim() === '') {
    return [{ param: idParam, message: `${idParam} is missing: set it to the Google Ads conversion action id to fire.` }];
  }
  const customerId = normalizeCustomerId(settings.customer_id) ?? '0';
  if (conversionActionResourceName(customerId, id) === null) {
    return [
      {
        param: idParam,
        message: `${idParam} '${id}' is not a Google Ads conversion action: use its numeric id or customers/{customer_id}/conversionActions/{id}.`,
      },
    ];
  }
  return [];
}

export const googleAdsDestination: DestinationKind = {
  type: 'google-ads',
  label: 'Google Ads',
  consent:
    'Conversions captured by your flows will be uploaded to this Google Ads account as click conversions (with the ad click id and hashed identifiers), so Google Ads can attribute signups to your campaigns.',
  fields: [
    { name: 'customer_id', label: 'Google Ads customer ID', hint: 'The 10-digit ID at the top of Google Ads, e.g. 123-456-7890.', required: true, placeholder: '123-456-7890' },
    { name: 'login_customer_id', label: 'Manager account ID (optional)', hint: 'Only when you reach this account through a manager (MCC) account.', required: false, placeholder: '987-654-3210' },
    {
      name: 'access_token',
      label: 'OAuth access token (optional)',
      hint: 'In production the Google sign-in step supplies this token; without one, uploads fail with destination_credentials_missing.',
      required: false,
      secret: true,
    },
  ],
  parseConnectForm: parseForm,
  checkAction,
};
