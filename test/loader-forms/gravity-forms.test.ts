// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { installJQuery, render, resetPage, settle, start, submit } from './page';

afterEach(resetPage);

/** Gravity Forms' markup for form 3: a name field with first/last sub-inputs, email, phone, a hidden and a password. */
const renderForm = () =>
  render(`
    <div class="gform_wrapper" id="gform_wrapper_3">
      <form id="gform_3" method="post">
        <span class="name_first"><input name="input_1.3" type="text" value="Ada"></span>
        <span class="name_last"><input name="input_1.6" type="text" value="Lovelace"></span>
        <div class="ginput_container_email"><input name="input_2" type="email" value="ada@example.com"></div>
        <input name="input_4" type="tel" value="+44 20 7946 0000">
        <input name="input_5" type="hidden" value="hidden@example.com">
        <input name="input_6" type="password" value="secret">
        <input type="submit" id="gform_submit_button_3" value="Submit">
      </form>
    </div>`);

/** What Gravity Forms does on an AJAX success: replaces the form with its confirmation, then the jQuery event. */
function confirmAjax(wrapper: Element, $?: ReturnType<typeof installJQuery>) {
  wrapper.outerHTML =
    '<div id="gform_confirmation_wrapper_3" class="gform_confirmation_wrapper"><div id="gform_confirmation_message_3" class="gform_confirmation_message_3 gform_confirmation_message">Thanks!</div></div>';
  $?.trigger(document, 'gform_confirmation_loaded', [3]);
}

const ADA = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0000' };

describe('Gravity Forms', () => {
  test('an AJAX success reports once, with the fields read at submit and the form id', async () => {
    const $ = installJQuery();
    const { reports } = start('gravity-forms');
    const wrapper = renderForm();
    submit(wrapper.querySelector('form')!);
    confirmAjax(wrapper, $);
    await settle();
    expect(reports).toEqual([{ integration: 'gravity-forms', form_id: '3', fields: ADA }]);
  });

  test('without jQuery, the confirmation rendered after a submit is the signal', async () => {
    const { reports } = start('gravity-forms');
    const wrapper = renderForm();
    submit(wrapper.querySelector('form')!);
    confirmAjax(wrapper);
    await settle();
    expect(reports).toEqual([{ integration: 'gravity-forms', form_id: '3', fields: ADA }]);
  });

  test('a failed validation (the form re-rendered with errors) reports nothing', async () => {
    installJQuery();
    const { reports } = start('gravity-forms');
    const wrapper = renderForm();
    submit(wrapper.querySelector('form')!);
    wrapper.classList.add('gform_validation_error');
    wrapper.insertAdjacentHTML('afterbegin', '<div class="gform_validation_errors">There was a problem.</div>');
    await settle();
    expect(reports).toEqual([]);
  });

  test('a confirmation already on the page (a full-page submit) reports once, without fields', async () => {
    render('<div id="gform_confirmation_wrapper_7" class="gform_confirmation_wrapper"><div id="gform_confirmation_message_7" class="gform_confirmation_message">Thanks!</div></div>');
    const { reports } = start('gravity-forms');
    await settle();
    expect(reports).toEqual([{ integration: 'gravity-forms', form_id: '7', fields: {} }]);
  });

  test('a multi-page form adds up its pages: the email of page 1 reaches the success of page 2', async () => {
    const $ = installJQuery();
    const { reports } = start('gravity-forms');
    const page1 = render<HTMLFormElement>('<form id="gform_5"><input type="email" name="input_1" value="ada@example.com"></form>');
    submit(page1);
    page1.remove();
    const page2 = render<HTMLFormElement>('<form id="gform_5"><input name="input_2" autocomplete="given-name" value="Ada"></form>');
    submit(page2);
    $.trigger(document, 'gform_confirmation_loaded', [5]);
    expect(reports).toEqual([{ integration: 'gravity-forms', form_id: '5', fields: { email: 'ada@example.com', first_name: 'Ada' } }]);
  });

  test('a second submit after a success is a second lead', async () => {
    const $ = installJQuery();
    const { reports } = start('gravity-forms');
    for (let i = 0; i < 2; i++) {
      const wrapper = renderForm();
      submit(wrapper.querySelector('form')!);
      confirmAjax(wrapper, $);
      await settle();
      document.body.innerHTML = '';
    }
    expect(reports).toHaveLength(2);
  });

  test('after stop, nothing is reported', async () => {
    const $ = installJQuery();
    const { reports, stop } = start('gravity-forms');
    stop();
    const wrapper = renderForm();
    submit(wrapper.querySelector('form')!);
    confirmAjax(wrapper, $);
    await settle();
    expect(reports).toEqual([]);
  });
});
