/**
 * The hosted connect form of Microsoft Advertising and the check of a flow action's config. The ids are the ones in the
 * web app's address bar, `cid` (customer) and `aid` (account): "Do not mistake the account number for the account
 * identifier" (https://learn.microsoft.com/en-us/advertising/guides/get-started#get-ids).
 */
import type { ConnectField, ConnectResult, EventTrigger, Problem } from '../destination';
import { hasControlCharacter } from '../../http/input';
import { fixedValueProblems } from '../fixed-value';
import { MAX_GOAL_NAME_LENGTH } from './request';

/** The fields of the hosted page, shown after the Microsoft sign-in. */
export const microsoftAdsFields: readonly ConnectField[] = [
  {
    name: 'customer_id',
    label: 'Customer ID',
    hint: 'The number after cid= in the address bar of Microsoft Advertising (your manager account / customer).',
    required: true,
    placeholder: '123456789',
    checkedOnConnect: true,
  },
  {
    name: 'account_id',
    label: 'Account ID',
    hint: 'The number after aid= in the address bar: the ad account whose ads are clicked. Not the account number (letters and digits, like F123ABCD).',
    required: true,
    placeholder: '987654321',
    checkedOnConnect: true,
  },
  {
    name: 'developer_token',
    label: 'Developer token (optional)',
    hint: 'Leave this empty unless whoever runs your cnv service asks you for one (then: Microsoft Advertising → Settings → Developer settings).',
    required: false,
    secret: true,
    // Left out of the page when the service has one for every account (CNV_MICROSOFT_ADS_DEVELOPER_TOKEN).
    providedBy: (settings) => settings.microsoft.developerToken !== '',
  },
];

const NUMERIC_ID = /^\d{1,19}$/;

/** Checks the connect form: two numeric ids, and an optional developer token kept as an encrypted credential. */
export function parseConnectForm(form: Record<string, string>): ConnectResult {
  const errors: Problem[] = [];
  const customerId = (form.customer_id ?? '').trim();
  const accountId = (form.account_id ?? '').trim();
  const devToken = (form.developer_token ?? '').trim();
  if (!NUMERIC_ID.test(customerId)) errors.push({ param: 'customer_id', message: 'Enter the customer ID: the digits after cid= in the Microsoft Advertising address bar.' });
  if (!NUMERIC_ID.test(accountId)) {
    errors.push({
      param: 'account_id',
      message: /[A-Za-z]/.test(accountId)
        ? 'That looks like the account number; enter the account ID instead: the digits after aid= in the address bar.'
        : 'Enter the account ID: the digits after aid= in the Microsoft Advertising address bar.',
    });
  }
  if (devToken !== '' && /\s/.test(devToken)) errors.push({ param: 'developer_token', message: 'A developer token has no spaces.' });
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: { customer_id: customerId, account_id: accountId },
    credentials: devToken === '' ? {} : { developer_token: devToken },
    summary: `Microsoft Advertising account ${accountId} (customer ${customerId})`,
  };
}

/**
 * Problems of a flow action's config: `conversion_name` (required: the exact name of an offline conversion goal),
 * `value` (optional) and `currency` (optional, only with a value), by the rules of a report's value and currency
 * (0 to 1e9 with at most 6 decimals; a real ISO 4217 code in capitals): see ../fixed-value.ts.
 */
export function checkAction(config: Record<string, unknown>, param: string, _trigger: EventTrigger): Problem[] {
  const problems: Problem[] = [];
  const name = config.conversion_name;
  if (typeof name !== 'string' || name.trim() === '') {
    problems.push({
      param: `${param}.conversion_name`,
      message:
        `${param}.conversion_name is missing: set it to the name of an offline conversion goal of the Microsoft Advertising account, ` +
        'exactly as written there (same spelling, spaces and capitals): Microsoft drops conversions whose name matches no goal.',
    });
  } else if (name.length > MAX_GOAL_NAME_LENGTH) {
    problems.push({ param: `${param}.conversion_name`, message: `${param}.conversion_name is longer than ${MAX_GOAL_NAME_LENGTH} characters, the longest goal name Microsoft Advertising allows.` });
  } else if (hasControlCharacter(name)) {
    // A goal's name is one line typed in Microsoft Advertising: a line break, a tab or an escape code can match none.
    problems.push({
      param: `${param}.conversion_name`,
      message: `${param}.conversion_name holds a control character (a line break, a tab, an escape code): a goal name is one line, so it could match no goal.`,
    });
  }
  const valueProblems = fixedValueProblems(config, param);
  problems.push(...valueProblems);
  const { value, currency } = config;
  const currencyRefused = valueProblems.some((p) => p.param === `${param}.currency`);
  if (currency !== undefined && currency !== null && (value === undefined || value === null) && !currencyRefused) {
    problems.push({ param: `${param}.currency`, message: `${param}.currency only applies with a value: set value too, or remove currency.` });
  }
  return problems;
}
