/**
 * The form-detectors bundle: watches the form tools a site's config lists and hands each successful submission to
 * the core loader, which owns the touch, consent, origin check and beacon. Built as its own script, fetched only
 * when the config's `forms` is not empty.
 */
import { isFormIntegration, type FormIntegration } from '../protocol/forms';
import { cleanValue } from '../loader/click-signals';
import { calendly } from './calendly';
import { contactForm7 } from './contact-form-7';
import { elementor } from './elementor';
import { gravityForms } from './gravity-forms';
import { guard } from '../loader/guard';
import { htmlForm } from './html-form';
import { hubspot } from './hubspot';
import { typeform } from './typeform';
import type { DetectedSubmission, Detector } from './types';
import { webflow } from './webflow';
import { wpforms } from './wpforms';

export type { DetectedFields, DetectedSubmission } from './types';

const DETECTORS: Record<FormIntegration, Detector> = {
  'gravity-forms': gravityForms,
  hubspot,
  'contact-form-7': contactForm7,
  wpforms,
  elementor,
  webflow,
  typeform,
  calendly,
  html: htmlForm,
};

/**
 * Starts the detectors of the listed integrations (unknown names and repeats ignored); report gets one
 * DetectedSubmission per successful submission. Returns a function that stops them all. Never throws.
 */
export function startFormDetectors(
  integrations: readonly string[],
  report: (submission: DetectedSubmission) => void,
  doc: Document = document,
  win: Window = window,
): () => void {
  const stops: (() => void)[] = [];
  for (const integration of new Set(Array.isArray(integrations) ? integrations : [])) {
    if (!isFormIntegration(integration)) continue;
    const stop = guard(DETECTORS[integration])({
      doc,
      win,
      report: guard((formId, fields) => {
        const id = formId === null || formId === undefined ? null : cleanValue(String(formId)) || null;
        report({ integration, form_id: id, fields });
      }),
    });
    if (stop) stops.push(stop);
  }
  return () => {
    for (const stop of stops.splice(0)) guard(stop)();
  };
}
