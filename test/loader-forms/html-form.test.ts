// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { render, resetPage, start, submit } from './page';

afterEach(resetPage);

const renderForm = (attribute = 'data-service-form="newsletter"', email = 'ada@example.com') =>
  render<HTMLFormElement>(`
    <form ${attribute}>
      <input type="email" name="email" required value="${email}">
      <input type="text" name="first_name" value="Ada">
      <input type="password" name="password" value="secret">
      <input type="hidden" name="phone" value="+1 555">
      <button type="submit">Join</button>
    </form>`);

describe('plain HTML forms marked data-service-form', () => {
  test('a submit reports once, with the attribute as the form id and the visible fields only', () => {
    const { reports } = start('html');
    submit(renderForm());
    expect(reports).toEqual([{ integration: 'html', form_id: 'newsletter', fields: { email: 'ada@example.com', first_name: 'Ada' } }]);
  });

  test('a form that fails the browser validation reports nothing', () => {
    const { reports } = start('html');
    submit(renderForm(undefined, ''));
    expect(reports).toEqual([]);
  });

  test('an empty attribute gives no form id', () => {
    const { reports } = start('html');
    submit(renderForm('data-service-form'));
    expect(reports[0]!.form_id).toBeNull();
  });

  test('an unmarked form reports nothing', () => {
    const { reports } = start('html');
    submit(renderForm(''));
    expect(reports).toEqual([]);
  });

  test('a form added after the start counts too', () => {
    const { reports } = start('html');
    const form = renderForm();
    submit(form);
    expect(reports).toHaveLength(1);
  });
});
