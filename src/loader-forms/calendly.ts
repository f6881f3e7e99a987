/**
 * Calendly embeds. The scheduling page, in an iframe on `https://calendly.com`, posts
 * `{event: 'calendly.event_scheduled', payload: {event: {uri}, invitee: {uri}}}` to the parent window once a booking
 * is made: https://developer.calendly.com/api-docs/overview/embedding/notifying-the-parent-window
 * The invitee's name and email are not in the message (only API URIs), so no fields are sent. The form id is the
 * scheduling link's path (`acme/demo`) of the iframe the message came from, when it can be found.
 */
import { onMessageFrom, prop } from './messages';
import type { Detector } from './types';

export const CALENDLY_ORIGIN = 'https://calendly.com';

/** The path of the Calendly iframe whose window sent the message, without its leading slash. */
function schedulingLink(doc: Document, source: MessageEventSource | null): string | null {
  if (!source) return null;
  for (const frame of Array.from(doc.querySelectorAll('iframe'))) {
    if (frame.contentWindow !== source) continue;
    try {
      const url = new URL(frame.src);
      return url.origin === CALENDLY_ORIGIN ? url.pathname.replace(/^\/+|\/+$/g, '') || null : null;
    } catch {
      return null;
    }
  }
  return null;
}

export const calendly: Detector = ({ doc, win, report }) => {
  const invitees = new Set<string>();
  return onMessageFrom(win, [CALENDLY_ORIGIN], (data, event) => {
    if (prop(data, 'event') !== 'calendly.event_scheduled') return;
    const invitee = prop(prop(prop(data, 'payload'), 'invitee'), 'uri');
    if (typeof invitee === 'string' && invitee) {
      if (invitees.has(invitee)) return;
      invitees.add(invitee);
    }
    report(schedulingLink(doc, event.source), {});
  });
};
