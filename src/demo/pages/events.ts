/** `/events`: the demo site's recent events, as the store's backend reads them through GET /v1/events. */
import type { AdjustmentFacts, EventFacts } from '../event-facts';
import { moneyOf } from '../../protocol/money';
import { html, type Html } from '../../server/http/html';
import { layout, type PageContext } from './layout';
import { platformLabel } from '../journey';

/** The path the events page polls for a fresh table. */
export const EVENTS_TABLE_PATH = '/events/table';

const STATUS_PILL: Record<string, string> = { completed: 'ok', delivered: 'ok', adjusted: 'ok', queued: 'wait', failed: 'bad' };

/** What fired the event, in words. */
const TRIGGER_WORDS: Record<string, string> = { saas_signup: 'signup', conversion: 'later stage', form_submission: 'form' };

function pill(status: string | null): Html {
  return html`<span class="pill ${STATUS_PILL[status ?? ''] ?? 'none'}">${status ?? 'unknown'}</span>`;
}

/** A long id cut for a table cell; the whole value stays in the title. */
function shortId(value: string): Html {
  return html`<code title="${value}">${value.length > 13 ? `${value.slice(0, 12)}…` : value}</code>`;
}

/** The user a row belongs to: the customer id when the backend sent one (a stage's own id is not the user's). */
function userCell(event: EventFacts): Html {
  if (event.erased) return html`<span class="muted" title="The person was erased (an erasure request): the ids are replaced">erased</span>`;
  const user = event.customerId ?? event.customerEventId;
  if (!user) return html`–`;
  return html`<a href="/welcome?user=${encodeURIComponent(user)}" title="${user}">${user.length > 14 ? `${user.slice(0, 12)}…` : user}</a>`;
}

/** An adjustment in words: "Refund (retract)" or "Restated to EUR 19.00". */
function adjustmentTitle(adjustment: AdjustmentFacts): string {
  return adjustment.type === 'retract' ? 'Retracted (refund)' : `Restated to ${moneyOf(adjustment.value, adjustment.currency) ?? 'a new value'}`;
}

/** An adjustment's result per destination, under the event: where it was applied, and why not elsewhere. */
function adjustmentRow(adjustment: AdjustmentFacts): Html {
  return html`<tr class="adjustment-row" data-adjustment="${adjustment.adjustmentId}">
    <td></td>
    <td colspan="5"><div class="adjustment-cell">
      <div class="adjustment-head small"><strong>${adjustmentTitle(adjustment)}</strong> <span class="muted">· ${adjustment.occurredAt?.replace(/\.\d+Z$/, 'Z').replace('T', ' ') ?? ''} · ${shortId(adjustment.adjustmentId)}</span></div>
      <ul class="adjustment-results">${adjustment.results.map(
        (r) => html`<li class="small" data-destination="${r.destination}" data-adjustment-status="${r.status}"><span class="dest-name">${platformLabel(r.destination)}</span> ${pill(r.status)}${r.reason ? html` <span class="muted">${r.reason}</span>` : ''}</li>`,
      )}</ul>
    </div></td>
  </tr>`;
}

function row(event: EventFacts): Html {
  const clickIds = Object.entries(event.clickIds);
  const [day, time] = event.occurredAt ? event.occurredAt.replace(/\.\d+Z$/, 'Z').split('T') : ['–', ''];
  const what = TRIGGER_WORDS[event.triggerType ?? ''] ?? event.trigger ?? '';
  const money = moneyOf(event.value, event.currency);
  return html`<tr data-event="${event.id}" data-trigger-type="${event.triggerType ?? ''}">
    <td class="small nowrap" data-label="Occurred">${day}<div class="muted">${time}</div></td>
    <td class="event-cell" data-label="Event"><span class="nowrap">${shortId(event.id)}</span><div class="small muted">${event.flowName ?? ''} · ${what}</div>${money ? html`<div class="small value" data-value>${money}</div>` : ''}</td>
    <td class="nowrap" data-label="Status">${pill(event.status)}<div class="small muted">match: ${event.matchQuality ?? '–'}</div></td>
    <td data-label="Click ids">${clickIds.length > 0 ? clickIds.map(([k, v]) => html`<div class="click small"><span class="muted">${k}</span> ${shortId(v)}</div>`) : html`<span class="muted small">none</span>`}</td>
    <td data-label="Destinations">${event.actions.map((a) => html`<div class="dest small" data-destination="${a.destination}"><span>${platformLabel(a.destination)}</span> ${pill(a.status)}</div>`)}</td>
    <td class="small" data-label="User">${userCell(event)}</td>
  </tr>${event.adjustments.map(adjustmentRow)}`;
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
