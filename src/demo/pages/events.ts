/** `/events`: the demo site's recent events, as the store's backend reads them through GET /v1/events. */
import type { EventFacts } from '../event-facts';
import { html, type Html } from '../../server/http/html';
import { layout, type PageContext } from './layout';

/** The path the events page polls for a fresh table. */
export const EVENTS_TABLE_PATH = '/events/table';

const STATUS_PILL: Record<string, string> = { completed: 'ok', delivered: 'ok', queued: 'wait', failed: 'bad' };

function pill(status: string | null): Html {
  return html`<span class="pill ${STATUS_PILL[status ?? ''] ?? 'none'}">${status ?? 'unknown'}</span>`;
}

function row(event: EventFacts): Html {
  const clickIds = Object.entries(event.clickIds);
  return html`<tr data-event="${event.id}">
    <td class="small">${event.occurredAt ? event.occurredAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '–'}</td>
    <td><code>${event.id}</code><div class="small muted">${event.flowName ?? ''} · ${event.trigger ?? ''}</div></td>
    <td>${pill(event.status)}</td>
    <td>${clickIds.length > 0 ? clickIds.map(([k, v]) => html`<div class="small"><code>${k}=${v}</code></div>`) : html`<span class="muted small">none</span>`}</td>
    <td class="small">${event.matchQuality ?? '–'}</td>
    <td>${event.actions.map((a) => html`<div class="small">${a.destination} ${pill(a.status)}</div>`)}</td>
    <td class="small">${event.customerEventId ? html`<a href="/welcome?user=${encodeURIComponent(event.customerEventId)}">${event.customerEventId}</a>` : '–'}</td>
  </tr>`;
}

/** The table of events, or why it is empty. */
export function eventsTable(events: EventFacts[], error: string | null): Html {
  if (error) return html`<p class="pill bad">Could not read events: ${error}</p>`;
  if (events.length === 0) {
    return html`<div class="card"><p>No events yet. <a href="/">Click the ad</a>, then sign up on the <a href="/pricing">pricing page</a>.</p></div>`;
  }
  return html`<table class="events">
    <thead><tr><th>Occurred</th><th>Event</th><th>Status</th><th>Click ids</th><th>Match</th><th>Destinations</th><th>User</th></tr></thead>
    <tbody>${events.map(row)}</tbody>
  </table>`;
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
