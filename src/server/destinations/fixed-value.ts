/**
 * The fixed `value` and `currency` a flow action may give (Microsoft Advertising, LinkedIn): checked at publish by the
 * same rules as a report's value (src/protocol/webhook.ts), so a flow never publishes a value or currency that every
 * conversion would then carry to the platform and have refused there.
 */
import { VALUE_MAX, VALUE_MAX_DECIMALS, isConversionValue } from '../../protocol/webhook';
import { isCurrencyCode } from '../../protocol/currencies';
import type { Problem } from './destination';

/**
 * Problems of `value` and `currency` of an action's config (`param` is the config's path), each checked when present
 * (not undefined or null): the value a number from 0 to VALUE_MAX with at most VALUE_MAX_DECIMALS decimals, the
 * currency a real ISO 4217 code in capitals. Whether one needs the other is the platform's rule.
 */
export function fixedValueProblems(config: Record<string, unknown>, param: string): Problem[] {
  const problems: Problem[] = [];
  const { value, currency } = config;
  if (value !== undefined && value !== null && !isConversionValue(value)) {
    problems.push({
      param: `${param}.value`,
      message:
        `${param}.value must be a number from 0 to ${VALUE_MAX} with at most ${VALUE_MAX_DECIMALS} decimals ` +
        "(in the currency's major unit: 29.9 for 29.90 EUR), as a report's value.",
    });
  }
  if (currency !== undefined && currency !== null && !isCurrencyCode(currency)) {
    const shown = typeof currency === 'string' ? `'${currency.slice(0, 20)}'` : `a ${typeof currency}`;
    problems.push({
      param: `${param}.currency`,
      message: `${param}.currency ${shown} is not the ISO 4217 code of a current currency: write one in capital letters, such as "EUR" or "USD".`,
    });
  }
  return problems;
}
