/**
 * The Personal data form says the REST route's refusals in its own words: the labels it shows (Email, Phone, Customer
 * id), what to type, never the API's parameter names. Every refusal erasureTarget makes for a form's values is checked,
 * so a message reworded in the API without the form's wording following shows here.
 */
import { describe, expect, it } from 'vitest';
import { erasureTarget } from '../../src/server/api/erasures';
import { erasureProblemInWords } from '../../src/server/dashboard/pages/privacy';
import { CUSTOMER_ID_MAX } from '../../src/protocol/webhook';

/** The message erasureTarget refuses a body with. */
function refusal(body: Record<string, string>): string {
  try {
    erasureTarget(body);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`erasureTarget accepted ${JSON.stringify(body)}`);
}

describe('the erasure form in words', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{}, 'Give at least one of email, phone and customer id.'],
    [{ email: 'mailto:ada@example.com' }, 'Enter the address alone, without mailto: (e.g. name@example.com).'],
    [{ email: 'ada@localhost' }, 'Enter one email address, e.g. name@example.com.'],
    [{ phone: '555 0100' }, 'Enter the phone number with its country code, starting with + or 00, e.g. +1 202 555 0143.'],
    [{ customer_id: '   ' }, 'The customer id must not be blank.'],
    [{ customer_id: 'c'.repeat(CUSTOMER_ID_MAX + 1) }, `The customer id must be a string of at most ${CUSTOMER_ID_MAX} characters.`],
  ];
  it.each(cases)('refuses %j in the form’s words', (body, words) => {
    const message = refusal(body);
    expect(erasureProblemInWords(message)).toBe(words);
  });

  it("says the schema's length refusal without the parameter's name", () => {
    expect(erasureProblemInWords("Invalid parameter 'phone': it must be at most 512 characters. Expected: a phone number.")).toBe(
      'The phone number must be at most 512 characters.',
    );
  });

  it('leaves a message it does not know as it is', () => {
    expect(erasureProblemInWords('Something else went wrong.')).toBe('Something else went wrong.');
  });
});
