// @vitest-environment happy-dom
/** The forms script's side of the hook: detected submissions become form-submission bodies; on/off starts and stops. */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { formsRunner, submissionBody } from '../../src/loader-forms/submissions';
import type { FormWatch } from '../../src/protocol/collector';
import { render, resetPage, submit } from './page';

afterEach(() => {
  resetPage();
  delete (window as unknown as Record<string, unknown>).dataLayer;
});

const detected = { integration: 'html' as const, form_id: 'callback', fields: { email: 'ada@example.com' } };
const at = (url: string) => ({ location: { href: url } }) as unknown as Window;

describe('submissionBody', () => {
  test('has the protocol shape, less the page context the core adds', () => {
    const body = submissionBody(detected, [{ integration: 'html', page_filter: 'all' }], at('https://www.example.com/contact'));
    expect(body).toEqual({
      submission_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      integration: 'html',
      form_id: 'callback',
      fields: { email: 'ada@example.com' },
    });
  });

  test('is null on a page no page filter of that integration matches', () => {
    const watches: FormWatch[] = [
      { integration: 'html', page_filter: '/pricing/*' },
      { integration: 'hubspot', page_filter: 'all' },
    ];
    expect(submissionBody(detected, watches, at('https://www.example.com/contact'))).toBeNull();
    expect(submissionBody(detected, watches, at('https://www.example.com/pricing/team?x=1'))).not.toBeNull();
  });

});

describe('formsRunner', () => {
  const form = () =>
    render<HTMLFormElement>('<form data-service-form="f"><input type="email" name="email" value="ada@example.com"><button>Go</button></form>');

  test('starts the detectors on the first `on`, once, and sends each submission to form-submissions', () => {
    const run = formsRunner();
    const send = vi.fn();
    const watches: FormWatch[] = [{ integration: 'html', page_filter: 'all' }, { integration: 'html', page_filter: '/x' }];
    run(true, watches, send);
    run(true, watches, send);
    submit(form());
    expect(send).toHaveBeenCalledOnce();
    expect(send).toHaveBeenCalledWith('form-submissions', expect.objectContaining({ integration: 'html', form_id: 'f' }));
    run(false, watches, send);
  });

  test('stops them on `off` and starts them again on the next `on`', () => {
    const run = formsRunner();
    const send = vi.fn();
    const watches: FormWatch[] = [{ integration: 'html', page_filter: 'all' }];
    run(true, watches, send);
    run(false, watches, send);
    submit(form());
    expect(send).not.toHaveBeenCalled();
    run(true, watches, send);
    submit(form());
    expect(send).toHaveBeenCalledOnce();
    run(false, watches, send);
  });

  test('a confirmation already on the page is reported once: consent withdrawn and given again does not report it as a new lead', () => {
    // A Gravity Forms page after a full-page submit: the confirmation is there when the detectors start.
    render('<div id="gform_confirmation_wrapper_3" class="gform_confirmation_wrapper"><div id="gform_confirmation_message_3" class="gform_confirmation_message">Thanks!</div></div>');
    const run = formsRunner();
    const send = vi.fn();
    const watches: FormWatch[] = [{ integration: 'gravity-forms', page_filter: 'all' }];
    run(true, watches, send);
    expect(send).toHaveBeenCalledOnce();
    expect(send).toHaveBeenCalledWith('form-submissions', expect.objectContaining({ integration: 'gravity-forms', form_id: '3' }));
    run(false, watches, send);
    run(true, watches, send);
    expect(send).toHaveBeenCalledOnce();
    // A submission after the restart is still reported.
    run(true, [...watches, { integration: 'html', page_filter: 'all' }], send);
    run(false, watches, send);
    run(true, [{ integration: 'html', page_filter: 'all' }], send);
    submit(form());
    expect(send).toHaveBeenCalledTimes(2);
    run(false, watches, send);
  });

  test('tells the page each reported submission\'s id, the dedup id cnv sends the platforms, so a pixel can take the same', () => {
    const run = formsRunner();
    const send = vi.fn();
    const heard: unknown[] = [];
    const listener = (event: Event) => heard.push((event as CustomEvent).detail);
    window.addEventListener('service:form-submission', listener);
    try {
      run(true, [{ integration: 'html', page_filter: 'all' }], send);
      submit(form());
      expect(send).toHaveBeenCalledOnce();
      const sent = send.mock.calls[0]![1] as { submission_id: string };
      expect(heard).toEqual([{ submission_id: sent.submission_id, integration: 'html', form_id: 'f' }]);
      // A submission on a page no filter matches is not reported, and the page hears nothing of it either.
      run(false, [], send);
      run(true, [{ integration: 'html', page_filter: '/pricing' }], send);
      submit(form());
      expect(heard).toHaveLength(1);
      run(false, [], send);
    } finally {
      window.removeEventListener('service:form-submission', listener);
    }
  });

  test('`off` before any `on` does nothing', () => {
    expect(() => formsRunner()(false, [], vi.fn())).not.toThrow();
  });
});
