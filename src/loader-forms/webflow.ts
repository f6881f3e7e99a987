/**
 * Webflow forms. A Webflow form is `<div class="w-form"><form …>…</form><div class="w-form-done">…</div>
 * <div class="w-form-fail">…</div></div>`; the success and failure blocks start hidden, and on a successful submit
 * webflow.js hides the form and shows `.w-form-done` (`display: block`), on a failure it shows `.w-form-fail`
 * instead. Webflow has no success event, so the success block becoming visible after a submit is the signal. The
 * same show/hide contract is what Webflow custom-backend recipes reproduce:
 * https://github.com/formspark/documentation/blob/master/docs/examples/webflow.md
 * The form id is the form's `id` attribute (Webflow sets it from the form's name), else its `data-name`.
 */
import { watchElements } from './dom-watch';
import { keyOfElement, submitLedger } from './submit-ledger';
import type { Detector } from './types';

/** Whether webflow.js has shown the block: it toggles an inline display; the stylesheet hides it by default. */
function shown(block: Element): boolean {
  const display = (block as HTMLElement).style ? (block as HTMLElement).style.display : '';
  return display !== '' && display !== 'none' && !(block as HTMLElement).hidden;
}

export const webflow: Detector = ({ doc, win, report }) => {
  const wrapperOf = (form: HTMLFormElement) => form.closest('.w-form');
  const ledger = submitLedger(doc, (form) => {
    const wrapper = wrapperOf(form);
    return wrapper ? keyOfElement(wrapper) : null;
  });
  const stopWatch = watchElements(doc, win, (element) => {
    if (!element.classList.contains('w-form-done') || !shown(element)) return;
    const wrapper = element.closest('.w-form');
    if (!wrapper) return;
    const fields = ledger.settle(keyOfElement(wrapper), true);
    if (!fields) return;
    const form = wrapper.querySelector('form');
    report(form ? form.id || form.getAttribute('data-name') : null, fields);
  });
  return () => {
    ledger.stop();
    stopWatch();
  };
};
