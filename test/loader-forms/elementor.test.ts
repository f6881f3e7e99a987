// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { installJQuery, render, resetPage, settle, start, submit } from './page';

afterEach(resetPage);

/** Elementor Pro's form markup (form_id 8a1b2c3). */
const renderForm = () =>
  render<HTMLFormElement>(`
    <form class="elementor-form" method="post" name="Contact">
      <input type="hidden" name="post_id" value="12">
      <input type="hidden" name="form_id" value="8a1b2c3">
      <input type="text" name="form_fields[name]" id="form-field-name" value="Ada Lovelace">
      <input type="email" name="form_fields[email]" id="form-field-email" value="ada@example.com">
      <input type="hidden" name="form_fields[phone]" value="+1 555">
      <button type="submit">Send</button>
    </form>`);

/** What Elementor does on success: resets the form, renders the success message, triggers submit_success. */
function succeed(form: HTMLFormElement, $?: ReturnType<typeof installJQuery>) {
  form.reset();
  form.insertAdjacentHTML('beforeend', '<div class="elementor-message elementor-message-success" role="alert">Sent.</div>');
  $?.trigger(form, 'submit_success', [{}]);
}

describe('Elementor forms', () => {
  test('a success reports once (event and message are one lead), with the fields read at submit', async () => {
    const $ = installJQuery();
    const { reports } = start('elementor');
    const form = renderForm();
    submit(form);
    succeed(form, $);
    await settle();
    expect(reports).toEqual([{ integration: 'elementor', form_id: '8a1b2c3', fields: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' } }]);
  });

  test('without jQuery, the success message rendered after a submit is the signal', async () => {
    const { reports } = start('elementor');
    const form = renderForm();
    submit(form);
    succeed(form);
    await settle();
    expect(reports).toHaveLength(1);
  });

  test('an error message reports nothing', async () => {
    installJQuery();
    const { reports } = start('elementor');
    const form = renderForm();
    submit(form);
    form.insertAdjacentHTML('beforeend', '<div class="elementor-message elementor-message-danger" role="alert">Error.</div>');
    await settle();
    expect(reports).toEqual([]);
  });

  test('a success message without a submit (a cached page) reports nothing', async () => {
    const { reports } = start('elementor');
    succeed(renderForm());
    await settle();
    expect(reports).toEqual([]);
  });
});
