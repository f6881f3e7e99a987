/**
 * The hosted connect form of a platform connected by a long-lived token entered on the page (Meta's system-user token,
 * TikTok's Events API token, Reddit's conversion access token): the pixel (dataset) id, the token, and an optional
 * test code. Each platform says what its id looks like and how its words go; checking and splitting the form into
 * settings and the encrypted credential is done once, here.
 */
import type { ConnectContext, ConnectResult, Problem } from './destination';
import { LIMITED_DATA_USE, parseLimitedDataUse } from './limited-data-use';

/** What differs between platforms' token forms. */
export interface TokenFormRules {
  /** What the connection is called before its id, e.g. `TikTok pixel` (the summary: `TikTok pixel C4…`). */
  label: string;
  /** The pixel's field, how its value is tidied, what it must look like, and what to say when it is missing or wrong. */
  pixel: { field: string; normalize?: (raw: string) => string; pattern: RegExp; missing: string; invalid: string };
  /** How the token is called on the page (`access token`, `conversion access token`), and its longest length (4,096). */
  token: { missing: string; name: string; maxLength?: number };
  /** The optional test code's field and what to say when it is malformed (default: `test_event_code`, Meta's and TikTok's). */
  test?: { field: string; invalid: string };
  /** The form asks whether to send as Limited Data Use (limited-data-use.ts): platforms that take it per event. */
  limitedDataUse?: true;
}

const TEST_EVENT_CODE = { field: 'test_event_code', invalid: 'A test event code has letters and digits only, like TEST12345.' };

/** The field of the token (the credential), on every token form. */
export const TOKEN_FIELD = 'access_token';
const MIN_TOKEN_LENGTH = 20;
const TEST_CODE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks a submitted token form: the pixel id and test code become plain settings, the token the encrypted credential.
 * Signed in with the platform (an optional OAuth sign-in), no token is asked for and a pasted one is ignored.
 */
export function parseTokenForm(rules: TokenFormRules, form: Record<string, string>, context: ConnectContext = { signedIn: false }): ConnectResult {
  const errors: Problem[] = [];
  const rawPixel = (form[rules.pixel.field] ?? '').trim();
  const pixel = rules.pixel.normalize ? rules.pixel.normalize(rawPixel) : rawPixel;
  const token = (form[TOKEN_FIELD] ?? '').trim();
  const testRule = rules.test ?? TEST_EVENT_CODE;
  const test = (form[testRule.field] ?? '').trim();
  if (pixel === '') errors.push({ param: rules.pixel.field, message: rules.pixel.missing });
  else if (!rules.pixel.pattern.test(pixel)) errors.push({ param: rules.pixel.field, message: rules.pixel.invalid });
  if (context.signedIn) {
    // The sign-in gave the credential.
  } else if (token === '') errors.push({ param: TOKEN_FIELD, message: rules.token.missing });
  else if (/\s/.test(token) || token.length < MIN_TOKEN_LENGTH || token.length > (rules.token.maxLength ?? 4096)) {
    errors.push({ param: TOKEN_FIELD, message: `That does not look like ${/^[aeiou]/i.test(rules.token.name) ? 'an' : 'a'} ${rules.token.name}: copy the whole token, without spaces.` });
  }
  if (test !== '' && !TEST_CODE.test(test)) errors.push({ param: testRule.field, message: testRule.invalid });
  const ldu = rules.limitedDataUse ? parseLimitedDataUse(form) : { on: false };
  if ('problem' in ldu) errors.push(ldu.problem);
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: { [rules.pixel.field]: pixel, ...(test ? { [testRule.field]: test } : {}), ...('on' in ldu && ldu.on ? { [LIMITED_DATA_USE]: true } : {}) },
    credentials: context.signedIn ? {} : { [TOKEN_FIELD]: token },
    summary: `${rules.label} ${pixel}${context.signedIn ? ', signed in' : ''}`,
  };
}
