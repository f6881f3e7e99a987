// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { DOUBLE_SUBMIT_MS } from '../../src/loader-forms/html-form';
import { render, resetPage, start, submit } from './page';

afterEach(() => {
  resetPage();
  vi.useRealTimers();
});

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

  test('a novalidate form (as frameworks render them) whose fields are invalid reports nothing', () => {
    const { reports } = start('html');
    submit(renderForm('data-service-form="newsletter" novalidate', 'not-an-email'));
    submit(renderForm('data-service-form="newsletter" novalidate', ''));
    expect(reports).toEqual([]);
    submit(renderForm('data-service-form="newsletter" novalidate'));
    expect(reports).toHaveLength(1);
  });

  test('a double submit of the same fields is one lead; other fields, or the same after the window, are another', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-27T10:00:00Z'));
    const { reports } = start('html');
    const form = renderForm();
    submit(form);
    submit(form);
    expect(reports).toHaveLength(1);
    (form.elements.namedItem('first_name') as HTMLInputElement).value = 'Grace';
    submit(form);
    expect(reports).toHaveLength(2);
    vi.setSystemTime(new Date(Date.now() + DOUBLE_SUBMIT_MS));
    submit(form);
    expect(reports).toHaveLength(3);
  });
});
