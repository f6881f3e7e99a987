// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { postFrom, resetPage, start } from './page';

afterEach(resetPage);

const TYPEFORM = 'https://form.typeform.com';
const formSubmit = (responseId = 'resp-1') => ({ type: 'form-submit', embedId: 'abc123', formId: 'PlBzgL', responseId });

describe('Typeform embeds', () => {
  test('form-submit from form.typeform.com reports once per response, with the form id and no fields', () => {
    const { reports } = start('typeform');
    postFrom(TYPEFORM, formSubmit());
    postFrom(TYPEFORM, formSubmit());
    expect(reports).toEqual([{ integration: 'typeform', form_id: 'PlBzgL', fields: {} }]);
  });

  test('two responses are two leads', () => {
    const { reports } = start('typeform');
    postFrom(TYPEFORM, formSubmit('resp-1'));
    postFrom(TYPEFORM, formSubmit('resp-2'));
    expect(reports).toHaveLength(2);
  });

  test('other embed messages (ready, screen changed) report nothing', () => {
    const { reports } = start('typeform');
    postFrom(TYPEFORM, { type: 'form-ready', embedId: 'abc123', formId: 'PlBzgL' });
    postFrom(TYPEFORM, { type: 'form-screen-changed', embedId: 'abc123', formId: 'PlBzgL', ref: 'q1' });
    postFrom(TYPEFORM, 'form-submit');
    expect(reports).toEqual([]);
  });

  test('form-submit from any other origin, the page itself included, is ignored', () => {
    const { reports } = start('typeform');
    postFrom('https://evil.example.net', formSubmit());
    postFrom(window.location.origin, formSubmit());
    postFrom('https://form.typeform.com.evil.example.net', formSubmit());
    expect(reports).toEqual([]);
  });
});
