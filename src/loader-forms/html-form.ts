/**
 * Plain HTML forms marked `data-service-form` (its value is the form id). The submit event is the signal: the
 * browser fires it only after the form passed its own constraint validation (required, type=email, pattern…), so an
 * invalid form reports nothing. One listener on document in the capture phase, so forms added later count too.
 */
import { SERVICE_FORM_ATTRIBUTE } from '../protocol/forms';
import { readFields } from './fields';
import { guard } from '../loader/guard';
import type { Detector } from './types';

export const htmlForm: Detector = ({ doc, report }) => {
  const onSubmit = guard((event: Event) => {
    const form = event.target as HTMLFormElement | null;
    if (!form || form.tagName !== 'FORM' || !form.hasAttribute(SERVICE_FORM_ATTRIBUTE)) return;
    report(form.getAttribute(SERVICE_FORM_ATTRIBUTE) || null, readFields(form));
  });
  doc.addEventListener('submit', onSubmit, true);
  return () => doc.removeEventListener('submit', onSubmit, true);
};
