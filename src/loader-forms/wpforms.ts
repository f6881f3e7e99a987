/**
 * WPForms. Success signals:
 * - AJAX forms: the jQuery event `wpformsAjaxSubmitSuccess`, triggered on the form `#wpforms-form-<id>`
 *   (`data-formid="<id>"`) only when the submission succeeded: https://wpforms.com/developers/how-to-open-a-new-link-on-form-submission/
 * - every text confirmation, AJAX or after a full page reload: `<div class="wpforms-confirmation-container-full"
 *   id="wpforms-confirmation-<id>">` (or `wpforms-confirmation-container` when WPForms' CSS is disabled), rendered
 *   by WPForms' frontend (`wpforms-lite`, the `confirmation()` method of its frontend class).
 * A failed validation shows errors in the form and no confirmation. The confirmation replaces the form, so fields are
 * read at submit; after a full page reload they are gone and that submission reports no fields.
 */
import { onJQueryEvent } from './jquery';
import { watchElements } from './dom-watch';
import { submitLedger } from './submit-ledger';
import type { Detector } from './types';

const CONFIRMATION_ID = /^wpforms-confirmation-(\d+)$/;

function formIdOf(form: HTMLFormElement): string | null {
  if (!form.classList.contains('wpforms-form')) return null;
  return form.getAttribute('data-formid') || /^wpforms-form-(\d+)$/.exec(form.id)?.[1] || null;
}

export const wpforms: Detector = ({ doc, win, report }) => {
  const ledger = submitLedger(doc, formIdOf);
  const success = (formId: string, requireSubmit: boolean) => {
    const fields = ledger.settle(formId, requireSubmit);
    if (fields) report(formId, fields);
  };
  for (const element of Array.from(doc.querySelectorAll('[id^="wpforms-confirmation-"]'))) {
    const formId = CONFIRMATION_ID.exec(element.id)?.[1];
    if (formId) success(formId, false);
  }
  const stopJQuery = onJQueryEvent(win, doc, 'wpformsAjaxSubmitSuccess', (element) => {
    const formId = element && (element as Element).tagName === 'FORM' ? formIdOf(element as HTMLFormElement) : null;
    if (formId) success(formId, false);
  });
  const stopWatch = watchElements(doc, win, (element) => {
    const formId = CONFIRMATION_ID.exec(element.id)?.[1];
    if (formId) success(formId, true);
  });
  return () => {
    ledger.stop();
    stopJQuery();
    stopWatch();
  };
};
