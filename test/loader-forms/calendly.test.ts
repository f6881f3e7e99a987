// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { postFrom, render, resetPage, start } from './page';

afterEach(resetPage);

const CALENDLY = 'https://calendly.com';
const scheduled = (invitee = 'https://api.calendly.com/scheduled_events/EV1/invitees/INV1') => ({
  event: 'calendly.event_scheduled',
  payload: { event: { uri: 'https://api.calendly.com/scheduled_events/EV1' }, invitee: { uri: invitee } },
});

describe('Calendly embeds', () => {
  test('event_scheduled from calendly.com reports once per invitee, with no fields', () => {
    const { reports } = start('calendly');
    postFrom(CALENDLY, scheduled());
    postFrom(CALENDLY, scheduled());
    expect(reports).toEqual([{ integration: 'calendly', form_id: null, fields: {} }]);
  });

  test('the form id is the scheduling link of the iframe that sent the message', () => {
    // happy-dom loads no iframe page, so the iframe's window is stood in for.
    const frame = render<HTMLIFrameElement>('<iframe></iframe>');
    const frameWindow = {} as Window;
    Object.defineProperty(frame, 'contentWindow', { value: frameWindow });
    frame.setAttribute('data-src', 'https://calendly.com/acme/demo?embed_domain=www.example.com&embed_type=Inline');
    Object.defineProperty(frame, 'src', { get: () => frame.getAttribute('data-src') });
    const { reports } = start('calendly');
    postFrom(CALENDLY, scheduled(), frameWindow);
    expect(reports[0]!.form_id).toBe('acme/demo');
  });

  test('the steps before the booking report nothing', () => {
    const { reports } = start('calendly');
    for (const event of ['calendly.profile_page_viewed', 'calendly.event_type_viewed', 'calendly.date_and_time_selected']) {
      postFrom(CALENDLY, { event, payload: {} });
    }
    expect(reports).toEqual([]);
  });

  test('event_scheduled from any other origin is ignored', () => {
    const { reports } = start('calendly');
    postFrom('https://evil.example.net', scheduled());
    postFrom(window.location.origin, scheduled());
    expect(reports).toEqual([]);
  });
});
