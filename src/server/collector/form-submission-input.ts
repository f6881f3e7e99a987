/** Validation of a form-submission body at the collector's edge (the spec's form trigger): the protocol's payload, nothing else trusted. */
import { isFormIntegration } from '../../protocol/collector';
import type { FormFields, FormSubmissionPayload } from '../../protocol/forms';
import { FORM_FIELD_NAMES } from '../../protocol/forms';
import { MAX_IDENTITY_FIELD_LENGTH } from '../../protocol/identity';
import { isCorrelationToken } from '../../protocol/cookies';
import { isWellFormedText, parseJsonText } from '../http/json-text';
import { ApiError, invalidParam } from '../http/errors';
import { readConsent, readCookies, readOptionalUrl, readRecord, readTimestamp, readTouch, readUrl } from './snapshot-input';

/** Longest form id kept. */
const FORM_ID_MAX = 200;

/** Parses and validates a form-submission body (JSON text); throws a 400 naming the first fault. */
export function parseFormSubmissionBody(text: unknown): FormSubmissionPayload {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', 'Empty body: send the form submission as JSON.');
  }
  const body = readRecord(parseJsonText(text, { what: 'The body', protoKeys: 'drop', unpairedSurrogates: 'keep' }), 'body');
  // The submission id has the shape of a correlation token: 16 random bytes, base64url.
  if (!isCorrelationToken(body.submission_id)) throw invalidParam('submission_id', 'submission_id must be 22 base64url characters.');
  if (!isFormIntegration(body.integration)) throw invalidParam('integration', 'integration is not a supported form integration.');
  return {
    submission_id: body.submission_id,
    integration: body.integration,
    form_id: formId(body.form_id),
    occurred_at: readTimestamp(body.occurred_at, 'occurred_at'),
    page_url: readUrl(body.page_url, 'page_url'),
    referrer: readOptionalUrl(body.referrer, 'referrer'),
    touch: readTouch(body.touch),
    cookies: readCookies(body.cookies),
    consent: body.consent === undefined || body.consent === null ? { ad_user_data: null, ad_personalization: null } : readConsent(body.consent),
    fields: fields(body.fields),
  };
}

function formId(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string' || value.length > FORM_ID_MAX || !isWellFormedText(value) || /[\u0000-\u001f]/.test(value)) {
    throw invalidParam('form_id', `form_id must be printable text of at most ${FORM_ID_MAX} characters, or null.`);
  }
  return value;
}

/**
 * The identity fields the loader read from the form (unknown names dropped). A value that is not storable text (an
 * unpaired surrogate, a NUL) is dropped rather than refused: the lead and its click still count, with less to match on.
 */
function fields(value: unknown): FormFields {
  if (value === undefined || value === null) return {};
  const bag = readRecord(value, 'fields');
  const out: FormFields = {};
  for (const name of FORM_FIELD_NAMES) {
    const raw = bag[name];
    if (raw === undefined || raw === null) continue;
    if (typeof raw !== 'string') throw invalidParam(`fields.${name}`, `fields.${name} must be a string or null.`);
    if (raw.length > MAX_IDENTITY_FIELD_LENGTH) {
      throw invalidParam(`fields.${name}`, `fields.${name} must be at most ${MAX_IDENTITY_FIELD_LENGTH} characters.`);
    }
    const text = raw.trim();
    if (text === '' || !isWellFormedText(text) || text.includes('\u0000')) continue;
    out[name] = text;
  }
  return out;
}
