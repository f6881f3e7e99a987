/** HTML form bodies (application/x-www-form-urlencoded) of the server-rendered pages: hosted handoffs and the dashboard. */
import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors';
import { utf8Text } from './json-text';

/** Largest form accepted, in bytes. */
export const FORM_MAX_BYTES = 16 * 1024;

/**
 * A form body as a plain record (the last value of a repeated field wins; no prototype, so `__proto__` is an ordinary
 * key). Decoding never fails: malformed percent-escapes and invalid UTF-8 become U+FFFD. A NUL character, which no
 * field may hold and PostgreSQL cannot store, is a 400.
 */
export function parseFormBody(body: string): Record<string, string> {
  const form: Record<string, string> = Object.create(null);
  for (const [key, value] of new URLSearchParams(body)) {
    if (key.includes('\u0000') || value.includes('\u0000')) {
      throw new ApiError(400, 'invalid_request_error', 'invalid_form', 'A form field holds a NUL character, which no field may contain.');
    }
    form[key] = value;
  }
  return form;
}

/**
 * Makes the plugin scope `app` read form bodies with parseFormBody, up to `maxBytes`, and no other body: its pages post
 * HTML forms only, and a JSON body (the app's parser) gave their handlers numbers, lists and nulls where a form has
 * only text (a 500 when they trimmed one). Any other Content-Type is now Fastify's 415.
 */
export function acceptForms(app: FastifyInstance, maxBytes: number = FORM_MAX_BYTES): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: maxBytes }, (_request, body, done) => {
    try {
      done(null, parseFormBody(utf8Text(body as Buffer, 'The form', 'invalid_form')));
    } catch (error) {
      done(error as Error);
    }
  });
}
