// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { startFormDetectors } from '../../src/loader-forms/index';
import { postFrom, render, resetPage, start, submit } from './page';

afterEach(resetPage);

const marked = () => render<HTMLFormElement>('<form data-service-form="f1"><input type="email" name="email" value="a@b.c"></form>');

describe('startFormDetectors', () => {
  test('starts only the listed integrations; unknown names and repeats are ignored', () => {
    const { reports } = start('html', 'html', 'no-such-tool');
    submit(marked());
    postFrom('https://form.typeform.com', { type: 'form-submit', formId: 'x', responseId: 'r' });
    expect(reports).toEqual([{ integration: 'html', form_id: 'f1', fields: { email: 'a@b.c' } }]);
  });

  test('an empty list watches nothing', () => {
    const { reports } = start();
    submit(marked());
    expect(reports).toEqual([]);
  });

  test('the returned function stops every detector', () => {
    const { reports, stop } = start('html', 'typeform');
    stop();
    submit(marked());
    postFrom('https://form.typeform.com', { type: 'form-submit', formId: 'x', responseId: 'r' });
    expect(reports).toEqual([]);
  });

  test('a report function that throws never reaches the page', () => {
    const stop = startFormDetectors(['html'], () => {
      throw new Error('beacon failed');
    });
    const onError = vi.fn();
    window.addEventListener('error', onError);
    expect(() => submit(marked())).not.toThrow();
    expect(onError).not.toHaveBeenCalled();
    window.removeEventListener('error', onError);
    stop();
  });

  test('a form id longer than 500 characters is capped', () => {
    const { reports } = start('typeform');
    postFrom('https://form.typeform.com', { type: 'form-submit', formId: 'f'.repeat(600), responseId: 'r' });
    expect(reports[0]!.form_id).toHaveLength(500);
  });

  test('a broken page (no MutationObserver, a throwing jQuery) does not stop the start', () => {
    (window as unknown as Record<string, unknown>).jQuery = () => {
      throw new Error('old jQuery');
    };
    expect(() => startFormDetectors(['gravity-forms', 'wpforms', 'elementor', 'webflow'], () => {})()).not.toThrow();
  });
});
