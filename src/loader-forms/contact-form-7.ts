/**
 * Contact Form 7. Success signal: the DOM event `wpcf7mailsent`, fired when an Ajax submission completed and the mail
 * was sent (not on `wpcf7invalid`, `wpcf7spam` or `wpcf7mailfailed`); it bubbles to document and its `detail`
 * carries `contactFormId`, `unitTag` and `inputs` (name/value pairs): https://contactform7.com/dom-events/ , form
 * statuses: https://contactform7.com/2023/12/17/form-status/ .
 * CF7 resets the form after a successful send, so the fields are read at submit (the ledger, keyed by the hidden
 * `_wpcf7_unit_tag` input CF7 renders in each form); the live form and then `detail.inputs` are the fallbacks.
 */
import { fieldsFromPairs, readFields } from './fields';
import { guard } from '../loader/guard';
import { prop } from './messages';
import { submitLedger } from './submit-ledger';
import type { Detector, DetectedFields } from './types';

const unitTagOf = (form: HTMLFormElement): string | null =>
  (form.querySelector('input[name="_wpcf7_unit_tag"]') as HTMLInputElement | null)?.value || null;

/** The form the event was dispatched on or in (CF7 dispatches on the form, older versions on its `.wpcf7` wrapper). */
function formOf(target: EventTarget | null): HTMLFormElement | null {
  const element = target as Element | null;
  if (!element || typeof element.querySelector !== 'function') return null;
  return element.tagName === 'FORM' ? (element as HTMLFormElement) : element.querySelector('form');
}

/** detail.inputs, without any input the form renders as hidden, password or file (their names say nothing safe). */
function fieldsFromInputs(inputs: unknown, form: HTMLFormElement | null): DetectedFields {
  if (!Array.isArray(inputs)) return {};
  const unread = new Set(
    form ? Array.from(form.querySelectorAll('input')).filter((i) => !['text', 'email', 'tel'].includes(i.type)).map((i) => i.name) : [],
  );
  return fieldsFromPairs(
    inputs
      .map((input): [string, unknown] => [String(prop(input, 'name')), prop(input, 'value')])
      .filter(([name]) => !unread.has(name)),
  );
}

export const contactForm7: Detector = ({ doc, report }) => {
  const ledger = submitLedger(doc, unitTagOf);
  const onMailSent = guard((event: Event) => {
    const detail = (event as CustomEvent).detail as unknown;
    const form = formOf(event.target);
    const unitTag = prop(detail, 'unitTag');
    const key = typeof unitTag === 'string' && unitTag ? unitTag : (form && unitTagOf(form)) || 'unknown';
    const remembered = ledger.settle(key, false);
    if (!remembered) return;
    let fields = remembered;
    if (Object.keys(fields).length === 0 && form) fields = readFields(form);
    if (Object.keys(fields).length === 0) fields = fieldsFromInputs(prop(detail, 'inputs'), form);
    const formId = prop(detail, 'contactFormId');
    report(typeof formId === 'number' || typeof formId === 'string' ? formId : null, fields);
  });
  doc.addEventListener('wpcf7mailsent', onMailSent);
  return () => {
    ledger.stop();
    doc.removeEventListener('wpcf7mailsent', onMailSent);
  };
};
