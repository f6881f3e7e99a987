/**
 * A flow action's config for LinkedIn: the conversion rule to credit (`conversion_rule`, its id or its URN
 * `urn:lla:llaPartnerConversion:<id>`), and optionally a fixed conversion value (`value` with a `currency`, by the
 * rules of a report's value and currency: ../fixed-value.ts).
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
 */
import type { Problem } from '../destination';
import { fixedValueProblems } from '../fixed-value';
import { conversionValueOf } from '../../../protocol/webhook';

export const CONVERSION_URN_PREFIX = 'urn:lla:llaPartnerConversion:';

export interface ConversionRule {
  id: string;
  urn: string;
}

export interface LinkedInActionConfig {
  rule: ConversionRule;
  /** `conversionValue` as LinkedIn takes it: the amount as a decimal string, an ISO 4217 currency code. */
  conversionValue: { currencyCode: string; amount: string } | null;
}

/** The conversion rule named by an id (digits) or a URN; null when it is neither. */
export function parseConversionRule(value: unknown): ConversionRule | null {
  let text: string;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) text = String(value);
  else if (typeof value === 'string') text = value.trim();
  else return null;
  const id = text.startsWith(CONVERSION_URN_PREFIX) ? text.slice(CONVERSION_URN_PREFIX.length) : text;
  return /^[1-9][0-9]{0,18}$/.test(id) ? { id, urn: `${CONVERSION_URN_PREFIX}${id}` } : null;
}

const given = (field: unknown) => field !== undefined && field !== null;

/** The fixed value as published (checkLinkedInAction held it to a report's rules); read by shape only. */
function parseValue(config: Record<string, unknown>): { ok: true; value: LinkedInActionConfig['conversionValue'] } | { ok: false } {
  const { value, currency } = config;
  if (!given(value) && !given(currency)) return { ok: true, value: null };
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return { ok: false };
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return { ok: false };
  return { ok: true, value: { currencyCode: currency, amount: String(conversionValueOf(value) ?? value) } };
}

/** Problems of a LinkedIn action config; `param` is its path in the request (e.g. `actions_config[0].config`). */
export function checkLinkedInAction(config: Record<string, unknown>, param: string): Problem[] {
  const problems: Problem[] = [];
  if (parseConversionRule(config.conversion_rule) === null) {
    problems.push({
      param: `${param}.conversion_rule`,
      message:
        'conversion_rule must be the id of a LinkedIn conversion rule (digits, e.g. "104012") or its URN ' +
        '"urn:lla:llaPartnerConversion:104012": Campaign Manager > Analyze > Conversion tracking, a rule whose source is the Conversions API.',
    });
  }
  const valueProblems = fixedValueProblems(config, param);
  problems.push(...valueProblems);
  if (valueProblems.length === 0 && given(config.value) !== given(config.currency)) {
    const missing = given(config.value) ? 'currency' : 'value';
    problems.push({
      param: `${param}.${missing}`,
      message: `${param}.${missing} is missing: value and currency (an ISO 4217 code such as "USD") go together, or are both left out.`,
    });
  }
  const known = new Set(['conversion_rule', 'value', 'currency']);
  for (const key of Object.keys(config)) {
    if (!known.has(key)) problems.push({ param: `${param}.${key}`, message: `Unknown setting '${key}' for a LinkedIn action.` });
  }
  return problems;
}

/** The parsed config of an action that passed `checkLinkedInAction`; null when it no longer does. */
export function readLinkedInAction(config: Record<string, unknown>): LinkedInActionConfig | null {
  const rule = parseConversionRule(config.conversion_rule);
  const value = parseValue(config);
  return rule !== null && value.ok ? { rule, conversionValue: value.value } : null;
}
