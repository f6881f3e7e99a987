/**
 * The form-submission protocol (the spec's form trigger): which form tools the loader can watch, the body it posts
 * when one reports a successful submission, and where it posts it.
 */
import { collectorPath, type ConsentSignals, type FormIntegration, type Snapshot, type Touch } from './collector';
import { IDENTITY_FIELDS, type IdentityField } from './identity';

// The config's side of forms (which integrations exist, what the config lists) is defined beside SiteConfig.
export { FORM_INTEGRATIONS, isFormIntegration, type FormIntegration, type FormWatch } from './collector';

/** Form attribute marking a plain HTML form for the `html` integration; its value is the form id. */
export const SERVICE_FORM_ATTRIBUTE = 'data-service-form';

/** Identity fields a form submission may carry: the same names as the webhook's identity fields. */
export const FORM_FIELD_NAMES = IDENTITY_FIELDS;

export type FormField = IdentityField;

/** Identity fields read from the form, raw (the service normalises and hashes them per destination). */
export type FormFields = Partial<Record<FormField, string | null>>;

/** The body of `POST /collect/v1/sites/{site_key}/form-submissions` (text/plain JSON, like snapshots). */
export interface FormSubmissionPayload {
  /** 22 base64url characters (16 random bytes); the service deduplicates on it. */
  submission_id: string;
  integration: FormIntegration;
  /** The tool's own id of the form (Gravity Forms' number, HubSpot's GUID, …), null when the tool gives none. */
  form_id: string | null;
  occurred_at: string;
  page_url: string;
  referrer: string | null;
  touch: Touch | null;
  cookies: Snapshot['cookies'];
  consent: ConsentSignals;
  fields: FormFields;
}

/** Path to which the loader posts form submissions. */
export function formSubmissionsPath(siteKey: string): string {
  return collectorPath(siteKey, 'form-submissions');
}
