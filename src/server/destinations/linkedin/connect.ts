/**
 * The hosted connect form for LinkedIn, shown after the OAuth consent: the ad account whose conversion rules cnv
 * will credit. LinkedIn's conversions workflow has the user pick one ad account on which they hold a role other
 * than viewer, and the connection test checks exactly that.
 * https://learn.microsoft.com/en-us/linkedin/marketing/conversions/conversions-workflow
 */
import type { ConnectField, ConnectResult } from '../destination';

export const AD_ACCOUNT_URN_PREFIX = 'urn:li:sponsoredAccount:';

export const linkedinFields: readonly ConnectField[] = [
  {
    name: 'ad_account_id',
    label: 'LinkedIn ad account ID',
    hint: 'The number shown next to the account name in Campaign Manager (or its URN urn:li:sponsoredAccount:…). Your LinkedIn user needs a role on it other than Viewer.',
    required: true,
    placeholder: '507404993',
    checkedOnConnect: true,
  },
];

/** The ad account id (digits) of an id or `urn:li:sponsoredAccount:<id>`; null when it is neither. */
export function parseAdAccountId(raw: string | undefined): string | null {
  const text = (raw ?? '').trim();
  const id = text.startsWith(AD_ACCOUNT_URN_PREFIX) ? text.slice(AD_ACCOUNT_URN_PREFIX.length) : text;
  return /^[1-9][0-9]{0,18}$/.test(id) ? id : null;
}

/** Checks the connect form: settings hold the ad account; LinkedIn's tokens come from the OAuth step, not the form. */
export function parseLinkedInConnectForm(form: Record<string, string>): ConnectResult {
  const id = parseAdAccountId(form.ad_account_id);
  if (id === null) {
    return {
      ok: false,
      errors: [{ param: 'ad_account_id', message: 'Enter the ad account ID: digits, as Campaign Manager shows it (e.g. 507404993).' }],
    };
  }
  return {
    ok: true,
    settings: { ad_account_id: id, ad_account_urn: `${AD_ACCOUNT_URN_PREFIX}${id}` },
    credentials: {},
    summary: `LinkedIn ad account ${id}`,
  };
}
