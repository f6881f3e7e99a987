// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { installJQuery, render, resetPage, settle, start, submit } from './page';

afterEach(resetPage);

/** WPForms' markup for form 521. */
const renderForm = () =>
  render(`
    <div class="wpforms-container" id="wpforms-521">
      <form id="wpforms-form-521" class="wpforms-validate wpforms-form wpforms-ajax-form" data-formid="521" method="post">
        <input type="text" id="wpforms-521-field_0" name="wpforms[fields][0][first]" class="wpforms-field-name-first" value="Ada">
        <input type="text" id="wpforms-521-field_0-last" name="wpforms[fields][0][last]" class="wpforms-field-name-last" value="Lovelace">
        <input type="email" id="wpforms-521-field_1" name="wpforms[fields][1]" value="ada@example.com">
        <input type="hidden" name="wpforms[id]" value="521">
        <button type="submit" id="wpforms-submit-521">Submit</button>
      </form>
    </div>`);

/** What WPForms does on an AJAX success: the jQuery event on the form, then the form replaced by its confirmation. */
function succeed(container: Element, $?: ReturnType<typeof installJQuery>) {
  $?.trigger(container.querySelector('form')!, 'wpformsAjaxSubmitSuccess', [{ success: true, data: { form_id: 521 } }]);
  container.innerHTML = '<div class="wpforms-confirmation-container-full wpforms-confirmation-scroll" id="wpforms-confirmation-521"><p>Thanks!</p></div>';
}

describe('WPForms', () => {
  test('an AJAX success reports once (event and confirmation are one lead), with the fields read at submit', async () => {
    const $ = installJQuery();
    const { reports } = start('wpforms');
    const container = renderForm();
    submit(container.querySelector('form')!);
    succeed(container, $);
    await settle();
    expect(reports).toEqual([{ integration: 'wpforms', form_id: '521', fields: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' } }]);
  });

  test('without jQuery, the confirmation rendered after a submit is the signal', async () => {
    const { reports } = start('wpforms');
    const container = renderForm();
    submit(container.querySelector('form')!);
    succeed(container);
    await settle();
    expect(reports).toHaveLength(1);
  });

  test('a failed validation (errors in the form, no confirmation) reports nothing', async () => {
    installJQuery();
    const { reports } = start('wpforms');
    const container = renderForm();
    submit(container.querySelector('form')!);
    container.querySelector('form')!.insertAdjacentHTML('afterbegin', '<div class="wpforms-error-container">Please fix the errors.</div>');
    await settle();
    expect(reports).toEqual([]);
  });

  test('a confirmation already on the page (a full-page submit) reports once, without fields', () => {
    render('<div class="wpforms-container"><div class="wpforms-confirmation-container-full" id="wpforms-confirmation-9"><p>Thanks</p></div></div>');
    const { reports } = start('wpforms');
    expect(reports).toEqual([{ integration: 'wpforms', form_id: '9', fields: {} }]);
  });
});
