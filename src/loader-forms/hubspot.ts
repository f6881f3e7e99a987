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
import type { DetectedFields, Detector } from './types';

const V4_SUCCESS = 'hs-form-event:on-submission:success';

interface HubSpotV4Form {
  getFormId?(): unknown;
  getFormFieldValues?(): unknown;
}

export const hubspot: Detector = ({ win, report }) => {
  // One submission is one lead, however often HubSpot repeats its success signal for it: a legacy form's
  // conversionId names the submission; without one (and for v4 forms, whose event carries no submission id) the same
  // form with the same submitted values on this page is the same submission.
  const seen = new Set<string>();
  const once = (key: string, id: string | null, fields: DetectedFields) => {
    if (seen.has(key)) return;
    seen.add(key);
    report(id, fields);
  };
  const stopLegacy = onMessageFrom(win, [win.location.origin], (data) => {
    if (prop(data, 'type') !== 'hsFormCallback' || prop(data, 'eventName') !== 'onFormSubmitted') return;
    const payload = prop(data, 'data');
    const conversionId = prop(payload, 'conversionId');
    const values = prop(payload, 'submissionValues');
    const formId = prop(data, 'id') ?? prop(payload, 'formGuid');
    const id = typeof formId === 'string' ? formId : null;
    const key = typeof conversionId === 'string' && conversionId ? `c ${conversionId}` : `v ${id} ${JSON.stringify(values)}`;
    once(key, id, values && typeof values === 'object' ? fieldsFromPairs(Object.entries(values)) : {});
  });

  const onV4Success = guard((event: Event) => {
    const api = (win as unknown as { HubSpotFormsV4?: { getFormFromEvent?(e: Event): HubSpotV4Form | null } }).HubSpotFormsV4;
    const form = api && typeof api.getFormFromEvent === 'function' ? api.getFormFromEvent(event) : null;
    const idFromForm = form && typeof form.getFormId === 'function' ? form.getFormId() : undefined;
    const formId = typeof idFromForm === 'string' ? idFromForm : prop(prop(event, 'detail'), 'formId');
    const id = typeof formId === 'string' ? formId : null;
    const values = form && typeof form.getFormFieldValues === 'function' ? form.getFormFieldValues() : undefined;
    if (!values || typeof (values as Promise<unknown>).then !== 'function') {
      once(`4 ${id}`, id, {});
      return;
    }
    (values as Promise<unknown>).then(
      guard((list: unknown) => {
        const pairs = Array.isArray(list) ? list.map((f): [string, unknown] => [String(prop(f, 'name')), prop(f, 'value')]) : [];
        once(`4 ${id} ${JSON.stringify(pairs)}`, id, fieldsFromPairs(pairs));
      }),
      () => once(`4 ${id}`, id, {}),
    );
  });
  win.addEventListener(V4_SUCCESS, onV4Success);
  return () => {
    stopLegacy();
    win.removeEventListener(V4_SUCCESS, onV4Success);
  };
};
