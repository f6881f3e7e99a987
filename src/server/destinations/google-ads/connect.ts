/** Google Ads as a destination: the hosted connect form (after Google's OAuth step) and the checks of a flow's action. */
import type { ConnectContext, ConnectField, ConnectResult, EventTrigger, Problem } from '../destination';
import { conversionActionId } from './data-manager-request';
import { GOOGLE_ADS_API_SCOPE, googleScopesFor } from './oauth';

/** Which Google API a connection sends through. */
export type GoogleAdsApi = 'data_manager' | 'google_ads_api';

/** A Google Ads customer id: 10 digits, written with or without the dashes Google shows (123-456-7890). */
export function parseGoogleAdsCustomerId(value: string): string | null {
  const digits = value.replace(/[\s-]/g, '');
  return /^\d{10}$/.test(digits) ? digits : null;
}

export const GOOGLE_ADS_FIELDS: readonly ConnectField[] = [
  { name: 'customer_id', label: 'Google Ads customer ID', hint: 'The 10-digit ID at the top of Google Ads, e.g. 123-456-7890.', required: true, placeholder: '123-456-7890' },
  { name: 'login_customer_id', label: 'Manager account ID (optional)', hint: 'Only when you reach this account through a manager (MCC) account.', required: false, placeholder: '987-654-3210' },
  {
    name: 'api',
    label: 'Send through',
    hint: "Google's Data Manager API, unless your uploads through the Google Ads API's uploadClickConversions still work (Google accepts no new adopters since 15 June 2026).",
    required: false,
    choices: [
      { value: 'data_manager', label: 'Data Manager API (recommended)' },
      { value: 'google_ads_api', label: 'Google Ads API (legacy)' },
    ],
    // Chosen before Google's consent screen: the Google Ads API needs its own scope (oauth.ts).
    beforeSignIn: true,
  },
];

/**
 * Checks the form into settings (account ids, API). No credential comes from the form: Google's OAuth gives the
 * tokens, and the Google Ads API no longer uses a developer token (sunset on 9 September 2026; see legacy-request.ts).
 * After a sign-in, the API must be one the grant's scopes cover: a sign-in for the Data Manager API cannot send through
 * the Google Ads API, and Google may let the person leave a scope unticked.
 */
export function parseGoogleAdsConnectForm(form: Record<string, string>, context?: ConnectContext): ConnectResult {
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
  const apiRaw = (form.api ?? '').trim() || 'data_manager';
  if (apiRaw !== 'data_manager' && apiRaw !== 'google_ads_api') {
    errors.push({ param: 'api', message: "Choose Google's Data Manager API or the Google Ads API." });
  } else if (context?.signedIn && context.grantedScopes) {
    const missing = googleScopesFor(apiRaw).filter((scope) => !context.grantedScopes!.includes(scope));
    if (missing.length > 0) {
      const api = apiRaw === 'google_ads_api' ? 'the Google Ads API' : "Google's Data Manager API";
      const why = missing.includes(GOOGLE_ADS_API_SCOPE) && apiRaw === 'google_ads_api' ? ' (the sign-in was for the Data Manager API, or that access was left unticked)' : '';
      errors.push({ param: 'api', message: `Google did not give cnv access to ${api}${why}: it needs ${missing.join(' and ')}. Sign in with Google again, choosing ${api} and allowing every access it asks for.` });
    }
  }
  if (errors.length > 0 || !customerId) return { ok: false, errors };
  return {
    ok: true,
    settings: { customer_id: customerId, login_customer_id: loginCustomerId, api: apiRaw },
    credentials: {},
    summary: `Google Ads customer ${customerId.replace(/^(\d{3})(\d{3})(\d{4})$/, '$1-$2-$3')}${apiRaw === 'google_ads_api' ? ' (Google Ads API)' : ''}`,
  };
}

/** Problems of a flow action's config: `conversion.id`, the conversion action to fire (numeric id or resource name). */
export function checkGoogleAdsAction(config: Record<string, unknown>, param: string, _trigger: EventTrigger): Problem[] {
  const idParam = `${param}.conversion.id`;
  const conversion = config.conversion;
  if (typeof conversion !== 'object' || conversion === null || Array.isArray(conversion)) {
    return [{ param: `${param}.conversion`, message: `${param}.conversion must be an object with the id of the Google Ads conversion action to fire.` }];
  }
  const id = (conversion as Record<string, unknown>).id;
  if (typeof id !== 'string' || id.trim() === '') {
    return [{ param: idParam, message: `${idParam} is missing: set it to the Google Ads conversion action id to fire.` }];
  }
  if (conversionActionId(config) === null) {
    return [
      {
        param: idParam,
        message: `${idParam} '${id.slice(0, 80)}' is not a Google Ads conversion action: use its numeric id or customers/{customer_id}/conversionActions/{id}.`,
      },
    ];
  }
  return [];
}
