// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { render, resetPage, start, submit } from './page';

afterEach(resetPage);

/** Contact Form 7's markup for form 42 (unit tag wpcf7-f42-p7-o1). */
const renderForm = () =>
  render(`
    <div class="wpcf7 js" id="wpcf7-f42-p7-o1">
      <form class="wpcf7-form init" method="post" novalidate>
        <input type="hidden" name="_wpcf7" value="42">
        <input type="hidden" name="_wpcf7_unit_tag" value="wpcf7-f42-p7-o1">
        <input type="text" name="your-name" value="Ada Lovelace">
        <input type="email" name="your-email" value="ada@example.com">
        <input type="hidden" name="your-phone" value="+1 555 0100">
        <input type="password" name="your-secret" value="secret">
        <input type="submit" value="Send">
      </form>
    </div>`).querySelector('form')!;

const INPUTS = [
  { name: 'your-name', value: 'Ada Lovelace' },
  { name: 'your-email', value: 'ada@example.com' },
  { name: 'your-phone', value: '+1 555 0100' },
];

/** CF7 dispatches its DOM events on the form; they bubble. */
function dispatch(form: HTMLFormElement, name: string, status: string) {
  form.dispatchEvent(
    new CustomEvent(name, { bubbles: true, detail: { contactFormId: 42, unitTag: 'wpcf7-f42-p7-o1', status, inputs: INPUTS } }),
  );
}

describe('Contact Form 7', () => {
  test('wpcf7mailsent reports once, with the contact form id and the fields read at submit', () => {
    const { reports } = start('contact-form-7');
    const form = renderForm();
    submit(form);
    form.reset(); // CF7 clears the form after a successful send
    dispatch(form, 'wpcf7submit', 'mail_sent');
    dispatch(form, 'wpcf7mailsent', 'mail_sent');
    expect(reports).toEqual([
      { integration: 'contact-form-7', form_id: '42', fields: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' } },
    ]);
  });

  test('the same success dispatched twice for one submit is one lead', () => {
    const { reports } = start('contact-form-7');
    const form = renderForm();
    submit(form);
    dispatch(form, 'wpcf7mailsent', 'mail_sent');
    dispatch(form, 'wpcf7mailsent', 'mail_sent');
    expect(reports).toHaveLength(1);
  });

  test('a failed validation, spam or mail failure reports nothing', () => {
    const { reports } = start('contact-form-7');
    const form = renderForm();
    submit(form);
    dispatch(form, 'wpcf7invalid', 'validation_failed');
    dispatch(form, 'wpcf7spam', 'spam');
    dispatch(form, 'wpcf7mailfailed', 'mail_failed');
    expect(reports).toEqual([]);
  });

  test('without a submit seen, the fields come from the event, but never those of hidden or password inputs', () => {
    const { reports } = start('contact-form-7');
    const form = renderForm();
    for (const input of Array.from(form.querySelectorAll<HTMLInputElement>('input[type=text],input[type=email]'))) input.value = '';
    dispatch(form, 'wpcf7mailsent', 'mail_sent');
    expect(reports[0]!.fields).toEqual({ email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' });
  });
});
