/**
 * HubSpot forms, both generations:
 * - Legacy forms (`hbspt.forms.create`): HubSpot's embed script posts global form events to the page's own window,
 *   `{type: 'hsFormCallback', eventName: 'onFormSubmitted', id: <form GUID>, data: {submissionValues, conversionId,
 *   formGuid, redirectUrl}}`; `onFormSubmitted` fires after a successful submit (`onFormSubmit` before it, so it is
 *   ignored): https://developers.hubspot.com/docs/cms/start-building/features/forms/legacy-forms
 *   The script runs in the page itself, so the message comes from the page's own origin; any other origin is ignored.
 * - Forms of the updated editor (v4): the window event `hs-form-event:on-submission:success` (`…:failed` on a
 *   failure); the form is found with `HubSpotFormsV4.getFormFromEvent(event)`, its id with `getFormId()` and its values
 *   with the asynchronous `getFormFieldValues()` (names such as `0-1/email`):
 *   https://developers.hubspot.com/docs/api-reference/latest/marketing/forms/global-form-events
 */
import { fieldsFromPairs } from './fields';
import { guard } from '../loader/guard';
import { onMessageFrom, prop } from './messages';
import type { Detector } from './types';

const V4_SUCCESS = 'hs-form-event:on-submission:success';

interface HubSpotV4Form {
  getFormId?(): unknown;
  getFormFieldValues?(): unknown;
}

export const hubspot: Detector = ({ win, report }) => {
  const conversions = new Set<string>();
  const stopLegacy = onMessageFrom(win, [win.location.origin], (data) => {
    if (prop(data, 'type') !== 'hsFormCallback' || prop(data, 'eventName') !== 'onFormSubmitted') return;
    const payload = prop(data, 'data');
    // One submission, one conversionId: the same message seen twice is one lead.
    const conversionId = prop(payload, 'conversionId');
    if (typeof conversionId === 'string' && conversionId) {
      if (conversions.has(conversionId)) return;
      conversions.add(conversionId);
    }
    const values = prop(payload, 'submissionValues');
    const id = prop(data, 'id') ?? prop(payload, 'formGuid');
    report(typeof id === 'string' ? id : null, values && typeof values === 'object' ? fieldsFromPairs(Object.entries(values)) : {});
  });

  const onV4Success = guard((event: Event) => {
    const api = (win as unknown as { HubSpotFormsV4?: { getFormFromEvent?(e: Event): HubSpotV4Form | null } }).HubSpotFormsV4;
    const form = api && typeof api.getFormFromEvent === 'function' ? api.getFormFromEvent(event) : null;
    const idFromForm = form && typeof form.getFormId === 'function' ? form.getFormId() : undefined;
    const formId = typeof idFromForm === 'string' ? idFromForm : prop(prop(event, 'detail'), 'formId');
    const id = typeof formId === 'string' ? formId : null;
    const values = form && typeof form.getFormFieldValues === 'function' ? form.getFormFieldValues() : undefined;
    if (!values || typeof (values as Promise<unknown>).then !== 'function') {
      report(id, {});
      return;
    }
    (values as Promise<unknown>).then(
      guard((list: unknown) => {
        const pairs = Array.isArray(list) ? list.map((f): [string, unknown] => [String(prop(f, 'name')), prop(f, 'value')]) : [];
        report(id, fieldsFromPairs(pairs));
      }),
      () => report(id, {}),
    );
  });
  win.addEventListener(V4_SUCCESS, onV4Success);
  return () => {
    stopLegacy();
    win.removeEventListener(V4_SUCCESS, onV4Success);
  };
};
