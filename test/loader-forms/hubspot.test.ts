// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { postFrom, resetPage, settle, start } from './page';

afterEach(resetPage);

const GUID = '3f5c696e-313e-4349-8e9f-a12679bb9ece';

/** The global form event HubSpot's legacy embed posts to the page after a successful submit. */
const submitted = (conversionId = 'conv-1') => ({
  type: 'hsFormCallback',
  eventName: 'onFormSubmitted',
  id: GUID,
  data: {
    conversionId,
    formGuid: GUID,
    redirectUrl: '',
    submissionValues: { email: 'ada@example.com', firstname: 'Ada', lastname: 'Lovelace', phone: '+1 555 0100', company: 'Analytical' },
  },
});

describe('HubSpot legacy forms', () => {
  test('onFormSubmitted from the page itself reports once, with the form GUID and the submitted values', () => {
    const { reports } = start('hubspot');
    postFrom(window.location.origin, submitted());
    postFrom(window.location.origin, submitted());
    expect(reports).toEqual([
      { integration: 'hubspot', form_id: GUID, fields: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', phone: '+1 555 0100' } },
    ]);
  });

  test('two submissions (two conversions) are two leads', () => {
    const { reports } = start('hubspot');
    postFrom(window.location.origin, submitted('conv-1'));
    postFrom(window.location.origin, submitted('conv-2'));
    expect(reports).toHaveLength(2);
  });

  test('without a conversionId, a repeated success signal of one submission is one lead; other values are another', () => {
    const { reports } = start('hubspot');
    const bare = submitted();
    delete (bare.data as { conversionId?: string }).conversionId;
    postFrom(window.location.origin, bare);
    postFrom(window.location.origin, bare);
    postFrom(window.location.origin, { ...bare, data: { ...bare.data, submissionValues: { ...bare.data.submissionValues, email: 'grace@example.com' } } });
    expect(reports.map((r) => r.fields.email)).toEqual(['ada@example.com', 'grace@example.com']);
  });

  test('onFormSubmit (before the submit succeeds) and other callbacks report nothing', () => {
    const { reports } = start('hubspot');
    postFrom(window.location.origin, { ...submitted(), eventName: 'onFormSubmit' });
    postFrom(window.location.origin, { ...submitted(), eventName: 'onFormReady' });
    expect(reports).toEqual([]);
  });

  test('the same message from another origin is ignored', () => {
    const { reports } = start('hubspot');
    postFrom('https://evil.example.net', submitted());
    expect(reports).toEqual([]);
  });
});

describe('HubSpot forms of the updated editor (v4)', () => {
  function installV4(values: { name: string; value: unknown }[]) {
    (window as unknown as Record<string, unknown>).HubSpotFormsV4 = {
      getFormFromEvent: () => ({ getFormId: () => GUID, getFormFieldValues: async () => values }),
    };
  }

  test('the success event reports once, with the form id and the values HubSpot gives', async () => {
    installV4([
      { name: '0-1/email', value: 'ada@example.com' },
      { name: '0-1/firstname', value: 'Ada' },
      { name: '0-1/lastname', value: 'Lovelace' },
    ]);
    const { reports } = start('hubspot');
    window.dispatchEvent(new CustomEvent('hs-form-event:on-submission:success', { detail: { formId: GUID } }));
    await settle();
    expect(reports).toEqual([{ integration: 'hubspot', form_id: GUID, fields: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' } }]);
  });

  test('the success event repeated for one submission reports once; another submission with other values reports again', async () => {
    installV4([{ name: '0-1/email', value: 'ada@example.com' }]);
    const { reports } = start('hubspot');
    for (let i = 0; i < 3; i++) window.dispatchEvent(new CustomEvent('hs-form-event:on-submission:success', { detail: { formId: GUID } }));
    await settle();
    installV4([{ name: '0-1/email', value: 'grace@example.com' }]);
    window.dispatchEvent(new CustomEvent('hs-form-event:on-submission:success', { detail: { formId: GUID } }));
    await settle();
    expect(reports.map((r) => r.fields.email)).toEqual(['ada@example.com', 'grace@example.com']);
  });

  test('the failure event reports nothing', async () => {
    installV4([]);
    const { reports } = start('hubspot');
    window.dispatchEvent(new CustomEvent('hs-form-event:on-submission:failed', { detail: { formId: GUID } }));
    await settle();
    expect(reports).toEqual([]);
  });

  test('without the HubSpotFormsV4 global, the event detail still gives the form id', () => {
    const { reports } = start('hubspot');
    window.dispatchEvent(new CustomEvent('hs-form-event:on-submission:success', { detail: { formId: GUID } }));
    expect(reports).toEqual([{ integration: 'hubspot', form_id: GUID, fields: {} }]);
  });
});
