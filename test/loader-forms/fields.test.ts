// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { cleanValue } from '../../src/loader/click-signals';
import { fieldsFromPairs, readFields } from '../../src/loader-forms/fields';
import { render, resetPage } from './page';

afterEach(resetPage);

const form = (inputs: string) => render<HTMLFormElement>(`<form>${inputs}</form>`);

describe('reading identity fields from a form', () => {
  test('reads email, phone, first and last name by type, autocomplete and name', () => {
    expect(
      readFields(
        form(`
          <input type="email" name="q1" value=" ada@example.com ">
          <input type="tel" name="q2" value="+44 20 7946 0000">
          <input name="q3" autocomplete="given-name" value="Ada">
          <input name="your-last-name" value="Lovelace">`),
      ),
    ).toEqual({ email: 'ada@example.com', phone: '+44 20 7946 0000', first_name: 'Ada', last_name: 'Lovelace' });
  });

  test('never reads password, hidden or file inputs, whatever their names say', () => {
    expect(
      readFields(
        form(`
          <input type="password" name="email" value="secret">
          <input type="hidden" name="email" value="hidden@example.com">
          <input type="file" name="email">
          <input type="hidden" name="phone" value="123">`),
      ),
    ).toEqual({});
  });

  test('skips checkboxes, disabled inputs, textareas and selects', () => {
    expect(
      readFields(
        form(`
          <input type="checkbox" name="email_opt_in" value="yes" checked>
          <input type="email" name="email" value="old@example.com" disabled>
          <textarea name="email">text@example.com</textarea>`),
      ),
    ).toEqual({});
  });

  test('splits a single name field: first word, then the rest', () => {
    expect(readFields(form('<input name="your-name" value="Ludwig van Beethoven">'))).toEqual({ first_name: 'Ludwig', last_name: 'van Beethoven' });
    expect(readFields(form('<input name="name" value="Cher">'))).toEqual({ first_name: 'Cher' });
  });

  test('an explicit first or last name wins over a split full name', () => {
    expect(readFields(form('<input name="name" value="A B"><input name="lastname" value="Lovelace">'))).toEqual({ first_name: 'A', last_name: 'Lovelace' });
  });

  test('the first non-empty value of a field wins; an email confirmation field is not the email', () => {
    expect(readFields(form('<input name="email" value=""><input name="email_confirm" value="x@y"><input name="e-mail" value="a@b">'))).toEqual({ email: 'a@b' });
  });

  test('reads the names tools give their fields', () => {
    expect(
      readFields(
        form(`
          <input name="form_fields[email]" value="e@x">
          <span class="name_first"><input name="input_1.3" value="Ada"></span>
          <span class="name_last"><input name="input_1.6" value="Lovelace"></span>`),
      ),
    ).toEqual({ email: 'e@x', first_name: 'Ada', last_name: 'Lovelace' });
  });
});

describe('identity fields from reported name/value pairs', () => {
  test('reads HubSpot-style names and ignores other fields and non-string values', () => {
    expect(
      fieldsFromPairs([
        ['0-1/email', 'ada@example.com'],
        ['firstname', 'Ada'],
        ['lastname', 'Lovelace'],
        ['mobilephone', '+1 555'],
        ['company', 'Analytical'],
        ['phone', 42],
      ]),
    ).toEqual({ email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', phone: '+1 555' });
  });
});

describe('capping a value (cleanValue, shared with the core)', () => {
  test('keeps values of up to 500 UTF-16 units whole', () => {
    expect(cleanValue('a'.repeat(500))).toBe('a'.repeat(500));
  });

  test('cuts longer values at 500 units', () => {
    expect(cleanValue('a'.repeat(600))).toBe('a'.repeat(500));
  });

  test('never splits a surrogate pair at the cut', () => {
    const value = 'a'.repeat(499) + '😀' + 'b';
    expect(cleanValue(value)).toBe('a'.repeat(499));
    expect(cleanValue('a'.repeat(498) + '😀' + 'b')).toBe('a'.repeat(498) + '😀');
  });

  test('caps what a form reports', () => {
    expect(readFields(form(`<input type="email" name="email" value="${'x'.repeat(700)}">`)).email).toHaveLength(500);
  });
});
