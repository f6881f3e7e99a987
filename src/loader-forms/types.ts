/** The shapes the form detectors share. */
import type { FormField, FormIntegration } from '../protocol/forms';

/** Identity fields a detector read, each a non-empty trimmed string capped like every value the loader sends (cleanValue: SIGNAL_VALUE_MAX, below the service's MAX_IDENTITY_FIELD_LENGTH). */
export type DetectedFields = Partial<Record<FormField, string>>;

/** One successful submission of a form tool, handed to the core loader (which adds touch, consent and sends it). */
export interface DetectedSubmission {
  integration: FormIntegration;
  form_id: string | null;
  fields: DetectedFields;
}

/** What a detector works with: the page and the function to call once per successful submission. */
export interface DetectorContext {
  doc: Document;
  win: Window;
  /** Reports one success; form_id is stringified and capped here. Never throws. */
  report(formId: string | number | null | undefined, fields: DetectedFields): void;
}

/** Starts watching one tool's success signal; returns the function that stops it. */
export type Detector = (context: DetectorContext) => () => void;
