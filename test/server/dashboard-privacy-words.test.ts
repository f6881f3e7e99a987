/**
 * The Personal data form says the REST route's refusals in its own words: the labels it shows (Email, Phone, Customer
 * id), what to type, never the API's parameter names. Every refusal erasureTarget makes for a form's values is checked,
 * so a message reworded in the API without the form's wording following shows here.
 */
import { describe, expect, it } from 'vitest';
import { erasureTarget } from '../../src/server/api/erasures';
import { erasureRefusalInWords } from '../../src/server/dashboard/pages/privacy';
import { CUSTOMER_ID_MAX } from '../../src/protocol/webhook';

/** The message and parameter erasureTarget refuses a body with. */
function refusal(body: Record<string, string>): { message: string; param?: string } {
  try {
    erasureTarget(body);
  } catch (error) {
    return { message: (error as Error).message, param: (error as { param?: string }).param };
  }
  throw new Error(`erasureTarget accepted ${JSON.stringify(body)}`);
}

describe('the erasure form in words', () => {
  const cases: Array<[Record<string, string>, { message: string; param?: string }]> = [
    [{}, { message: 'Give at least one of email, phone and customer id.' }],
    [{ email: 'mailto:ada@example.com' }, { message: 'Enter the address alone, without mailto: (e.g. name@example.com).', param: 'email' }],
    [{ email: 'ada@localhost' }, { message: 'Enter one email address, e.g. name@example.com.', param: 'email' }],
    [{ phone: '555 0100' }, { message: 'Enter the phone number with its country code, starting with + or 00, e.g. +1 202 555 0143.', param: 'phone' }],
    [{ customer_id: '   ' }, { message: 'The customer id must not be blank.', param: 'customer_id' }],
    [
      { customer_id: 'c'.repeat(CUSTOMER_ID_MAX + 1) },
      { message: `The customer id must be a string of at most ${CUSTOMER_ID_MAX} characters.`, param: 'customer_id' },
    ],
  ];
  it.each(cases)('refuses %j in the form’s words, on the field it names (none for an empty form)', (body, words) => {
    expect(erasureRefusalInWords(refusal(body))).toEqual(words);
  });

  it("says the schema's length refusal without the parameter's name", () => {
    expect(erasureRefusalInWords({ message: "Invalid parameter 'phone': it must be at most 512 characters. Expected: a phone number.", param: 'phone' })).toEqual(
      { message: 'The phone number must be at most 512 characters.', param: 'phone' },
    );
  });

  it('leaves a message it does not know as it is', () => {
    expect(erasureRefusalInWords({ message: 'Something else went wrong.' })).toEqual({ message: 'Something else went wrong.' });
  });
});
