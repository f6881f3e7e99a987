/** How the demo backend reads cnv's events: GET /v1/events with its API key, server-side only. */
import { eventFacts, type EventFacts } from './event-facts';
import type { ServiceApi } from './service-api';
import { paidEventId } from './signups';

/** Events, or why they could not be read (shown on the page instead of failing it). */
export interface EventsRead {
  events: EventFacts[];
  error: string | null;
}

async function read(fn: () => Promise<EventFacts[]>): Promise<EventsRead> {
  try {
    return { events: await fn(), error: null };
  } catch (error) {
    return { events: [], error: (error as Error).message };
  }
}

/** The demo site's most recent events, newest first. */
export function recentEvents(api: ServiceApi, siteId: string, limit = 25): Promise<EventsRead> {
  return read(async () => (await api.events({ site_id: siteId, limit: String(limit) })).data.map(eventFacts));
}

/**
 * The events of one signup: those whose customer_event_id is the user's id, or its paid-plan stage's id (found through
 * the email filter: the backend reports the stage with the user's email too).
 */
export function signupEvents(api: ServiceApi, siteId: string, signup: { id: string; email: string }): Promise<EventsRead> {
  return read(async () => {
    const page = await api.events({ site_id: siteId, email: signup.email, limit: '100' });
    const ids = new Set([signup.id, paidEventId(signup.id)]);
    return page.data.map(eventFacts).filter((e) => e.customerEventId !== null && ids.has(e.customerEventId));
  });
}
