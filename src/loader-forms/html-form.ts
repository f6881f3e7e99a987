/**
 * Plain HTML forms marked `data-service-form` (its value is the form id). The submit event is the signal, when the form
 * is valid: the browser fires it only after its constraint validation (required, type=email, pattern…), except for a
 * `novalidate` form (the usual set-up of framework forms), whose controls are asked here, without firing `invalid`
 * events. A second submit of the same fields within DOUBLE_SUBMIT_MS (a double click) is the same lead, reported once.
 * One listener on document in the capture phase, so forms added later count too.
 */
import { SERVICE_FORM_ATTRIBUTE } from '../protocol/forms';
import { readFields } from './fields';
import { guard } from '../loader/guard';
import type { Detector } from './types';

/** How long a submit of the same fields counts as the one before it (a double click, an impatient Enter). */
export const DOUBLE_SUBMIT_MS = 10_000;

/** Whether every control of the form that takes part in validation is valid (what the browser checks before submit). */
const valid = (form: HTMLFormElement): boolean =>
  [...form.elements].every((control) => !(control as HTMLInputElement).willValidate || (control as HTMLInputElement).validity.valid);

export const htmlForm: Detector = ({ doc, report }) => {
  const last = new WeakMap<HTMLFormElement, [string, number]>();
  const onSubmit = guard((event: Event) => {
    const form = event.target as HTMLFormElement | null;
    if (!form || form.tagName !== 'FORM' || !form.hasAttribute(SERVICE_FORM_ATTRIBUTE) || !valid(form)) return;
    const fields = readFields(form);
    const seen = JSON.stringify(fields);
    const before = last.get(form);
    const now = Date.now();
    last.set(form, [seen, now]);
    if (before && before[0] === seen && now - before[1] < DOUBLE_SUBMIT_MS) return;
    report(form.getAttribute(SERVICE_FORM_ATTRIBUTE) || null, fields);
  });
  doc.addEventListener('submit', onSubmit, true);
  return () => doc.removeEventListener('submit', onSubmit, true);
};
