/** `/events`: the demo site's recent events, as the store's backend reads them through GET /v1/events. */
import type { EventFacts } from '../event-facts';
import { html, type Html } from '../../server/http/html';
import { layout, type PageContext } from './layout';
import { platformLabel } from '../journey';

/** The path the events page polls for a fresh table. */
export const EVENTS_TABLE_PATH = '/events/table';

const STATUS_PILL: Record<string, string> = { completed: 'ok', delivered: 'ok', queued: 'wait', failed: 'bad' };

function pill(status: string | null): Html {
  return html`<span class="pill ${STATUS_PILL[status ?? ''] ?? 'none'}">${status ?? 'unknown'}</span>`;
}

/** A long id cut for a table cell; the whole value stays in the title. */
function shortId(value: string): Html {
  return html`<code title="${value}">${value.length > 13 ? `${value.slice(0, 12)}…` : value}</code>`;
}

function row(event: EventFacts): Html {
  const clickIds = Object.entries(event.clickIds);
  const [day, time] = event.occurredAt ? event.occurredAt.replace(/\.\d+Z$/, 'Z').split('T') : ['–', ''];
  return html`<tr data-event="${event.id}">
    <td class="small nowrap">${day}<div class="muted">${time}</div></td>
    <td class="nowrap">${shortId(event.id)}<div class="small muted">${event.flowName ?? ''} · ${event.trigger ?? ''}</div></td>
    <td class="nowrap">${pill(event.status)}<div class="small muted">match: ${event.matchQuality ?? '–'}</div></td>
    <td>${clickIds.length > 0 ? clickIds.map(([k, v]) => html`<div class="click small"><span class="muted">${k}</span> ${shortId(v)}</div>`) : html`<span class="muted small">none</span>`}</td>
    <td>${event.actions.map((a) => html`<div class="dest small" data-destination="${a.destination}"><span>${platformLabel(a.destination)}</span> ${pill(a.status)}</div>`)}</td>
    <td class="small">${event.customerEventId ? html`<a href="/welcome?user=${encodeURIComponent(event.customerEventId)}" title="${event.customerEventId}">${event.customerEventId.length > 14 ? `${event.customerEventId.slice(0, 12)}…` : event.customerEventId}</a>` : '–'}</td>
  </tr>`;
}

/** The table of events, or why it is empty. */
export function eventsTable(events: EventFacts[], error: string | null): Html {
  if (error) return html`<p class="pill bad">Could not read events: ${error}</p>`;
  if (events.length === 0) {
    return html`<div class="card"><p>No events yet. <a href="/">Click the ad</a>, then sign up on the <a href="/pricing">pricing page</a>.</p></div>`;
  }
  return html`<div class="table-scroll"><table class="events">
    <thead><tr><th>Occurred</th><th>Event</th><th>Status</th><th>Click ids</th><th>Destinations</th><th>User</th></tr></thead>
    <tbody>${events.map(row)}</tbody>
  </table></div>`;
}

/** The events page. */
export function eventsPage(ctx: PageContext, events: EventFacts[], error: string | null): Html {
  const body = html`
<h1>Events seen by cnv</h1>
<p class="lead">The demo store’s backend reads these with its API key through <code>GET /v1/events</code>, newest first.
The key stays on the server; this page only sees what the backend renders.</p>
<section data-live-src="${EVENTS_TABLE_PATH}" data-live-every="2000">${eventsTable(events, error)}</section>`;
  return layout(ctx, { title: 'Events', nav: 'events', body });
}
