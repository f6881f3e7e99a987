/**
 * Elementor Pro forms. Elementor's success signal is the jQuery event `submit_success`, triggered on the
 * `form.elementor-form` after its AJAX send succeeded (others bind `$('form.elementor-form').on('error submit_success', …)`,
 * e.g. https://github.com/idofri/elementor-otp/blob/master/assets/js/otp.js ; Elementor Pro's source is not public).
 * It is not a DOM event, so without jQuery it cannot be heard; the same success also renders
 * `<div class="elementor-message elementor-message-success">` inside the form (failures render
 * `elementor-message-danger`); that class pair is what third-party Elementor adapters key on (no Elementor page states
 * it: verify against a live Elementor Pro form).
 * Both are watched, and one submit settles once. Elementor resets the form on success, so fields are read at submit.
 * The form id is the value of the hidden `form_id` input Elementor renders in each form.
 */
import { onJQueryEvent } from './jquery';
import { watchElements } from './dom-watch';
import { keyOfElement, submitLedger } from './submit-ledger';
import type { Detector } from './types';

const formIdOf = (form: Element): string | null =>
  (form.querySelector('input[name="form_id"]') as HTMLInputElement | null)?.value || null;

export const elementor: Detector = ({ doc, win, report }) => {
  const ledger = submitLedger(doc, (form) => (form.classList.contains('elementor-form') ? keyOfElement(form) : null));
  const success = (form: Element | null) => {
    if (!form || !form.classList.contains('elementor-form')) return;
    // Elementor forms are always AJAX: no submit seen here, no lead (a success message left in a cached page is not one).
    const fields = ledger.settle(keyOfElement(form), true);
    if (fields) report(formIdOf(form), fields);
  };
  const stopJQuery = onJQueryEvent(win, doc, 'submit_success', (element) => {
    if (element && typeof (element as Element).closest === 'function') success((element as Element).closest('form'));
  });
  const stopWatch = watchElements(doc, win, (element) => {
    if (element.classList.contains('elementor-message-success')) success(element.closest('form'));
  });
  return () => {
    ledger.stop();
    stopJQuery();
    stopWatch();
  };
};
