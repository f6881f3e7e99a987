/**
 * Gravity Forms. Success signals:
 * - AJAX forms: the jQuery event `gform_confirmation_loaded` on document, with the form id as its argument, fired
 *   when the confirmation message is displayed: https://docs.gravityforms.com/gform_confirmation_loaded
 * - every text confirmation, AJAX or after a full page reload: the confirmation markup
 *   `#gform_confirmation_wrapper_<id> .gform_confirmation_message` (the message's own id is
 *   `gform_confirmation_message_<id>`): https://docs.gravityforms.com/form-confirmation-css-selectors-legacy/
 * A failed validation re-renders the form with its errors and shows no confirmation, so it reports nothing.
 * The confirmation replaces the form `#gform_<id>`, so the fields are read at its submit. After a full page reload
 * the fields are gone (the page before the reload kept them in memory only): that submission reports no fields.
 * Page and redirect confirmations navigate away without a success signal on this page; they are not detected.
 */
import { onJQueryEvent } from './jquery';
import { watchElements } from './dom-watch';
import { submitLedger } from './submit-ledger';
import type { Detector } from './types';

const FORM_ID = /^gform_(\d+)$/;
const CONFIRMATION_ID = /^gform_confirmation_(?:message|wrapper)_(\d+)$/;

/** The form id a confirmation element belongs to, or null when element is not a confirmation. */
function confirmationFormId(element: Element): string | null {
  if (!element.classList.contains('gform_confirmation_message')) return null;
  const own = CONFIRMATION_ID.exec(element.id);
  if (own) return own[1]!;
  const wrapper = element.closest('[id^="gform_confirmation_wrapper_"]');
  return (wrapper && CONFIRMATION_ID.exec(wrapper.id)?.[1]) || null;
}

export const gravityForms: Detector = ({ doc, win, report }) => {
  const ledger = submitLedger(doc, (form) => FORM_ID.exec(form.id)?.[1] ?? null);
  const success = (formId: string, requireSubmit: boolean) => {
    const fields = ledger.settle(formId, requireSubmit);
    if (fields) report(formId, fields);
  };
  // A confirmation already on the page at start is the answer to a full-page (non-AJAX) submit.
  for (const element of Array.from(doc.querySelectorAll('.gform_confirmation_message'))) {
    const formId = confirmationFormId(element);
    if (formId) success(formId, false);
  }
  const stopJQuery = onJQueryEvent(win, doc, 'gform_confirmation_loaded', (_element, [formId]) => {
    if (typeof formId === 'number' || (typeof formId === 'string' && formId !== '')) success(String(formId), false);
  });
  // Rendered later (AJAX): counts only after a submit seen here, so a confirmation in a re-rendered widget is no lead.
  const stopWatch = watchElements(doc, win, (element) => {
    const formId = confirmationFormId(element);
    if (formId) success(formId, true);
  });
  return () => {
    ledger.stop();
    stopJQuery();
    stopWatch();
  };
};
