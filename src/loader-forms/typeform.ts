/**
 * Typeform embeds. The form runs in an iframe on `https://form.typeform.com` (the embed SDK's default domain) and
 * posts `{type: 'form-submit', embedId, formId, responseId}` to the parent once the typeform is successfully
 * submitted (the SDK's `onSubmit` receives `{formId, responseId}`): https://github.com/Typeform/embed
 * (packages/embed/src/utils/create-iframe/get-form-event-handler.ts, base/actionable-options.ts). The answers stay
 * in the iframe: no identity fields. Messages from any other origin are ignored.
 */
import { onMessageFrom, prop } from './messages';
import type { Detector } from './types';

/** Origins a typeform iframe posts from: the SDK's default form domain. */
export const TYPEFORM_ORIGINS = ['https://form.typeform.com'] as const;

export const typeform: Detector = ({ win, report }) => {
  const responses = new Set<string>();
  return onMessageFrom(win, TYPEFORM_ORIGINS, (data) => {
    if (prop(data, 'type') !== 'form-submit') return;
    // One response, one lead, even when the SDK on the page re-posts it.
    const responseId = prop(data, 'responseId');
    if (typeof responseId === 'string' && responseId) {
      if (responses.has(responseId)) return;
      responses.add(responseId);
    }
    const formId = prop(data, 'formId');
    report(typeof formId === 'string' ? formId : null, {});
  });
};
