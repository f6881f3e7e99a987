/** The Events page: the spec's filters, timestamp paging, each event's destinations and statuses, and the daily chart. */
import { standingAdjustment, type EventRecord } from '../../api/events';
import { platformFor } from '../../destinations';
import type { SiteRecord } from '../../api/sites';
import type { FlowRecord } from '../../api/flows';
import { ERASED_ERROR_CODE } from '../../api/erasures';
import { badge, html, layout, when, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import { maskedEmail, triggerLabel } from '../labels';
import { moneyOf } from '../../../protocol/money';
import type { ChartView } from '../chart';

export { moneyOf };

/** The filters as the form sends them (dates as YYYY-MM-DD). */
export interface EventFilterForm {
  site_id?: string;
  flow_id?: string;
  email?: string;
  status?: string;
  from?: string;
  to?: string;
}

export interface EventsPageData {
  events: readonly EventRecord[];
  nextCursor: string | null;
  /** The cursor of the page shown (absent on the first page). */
  cursor?: string | undefined;
  filters: EventFilterForm;
  sites: readonly SiteRecord[];
  flows: readonly FlowRecord[];
  statuses: readonly string[];
  chart: Html;
  /** What the chart shows: conversions per day by status, or the value per day per currency. */
  chartView: ChartView;
  /** Reports of a burst stored and answered, whose events are being built (webhook/deferred-fanout.ts). */
  awaitingEvents?: number;
  /** How many days back the email and status filters search (CNV_IDENTITY_RETENTION_DAYS). */
  identityDays?: number;
  error?: string | undefined;
  /** The filter field (its name) the error is about, marked invalid. */
  errorField?: string | undefined;
}

/** The query string of a filter set, plus a cursor and the chart's view (conversions, the default, is left out). */
export function eventsQuery(filters: EventFilterForm, cursor?: string, chartView: ChartView = 'conversions'): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) params.set(k, v);
  if (cursor) params.set('starting_after', cursor);
  if (chartView === 'value') params.set('chart', 'value');
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** ` aria-invalid="true" aria-errormessage="filter-error"` on the field the page's error is about. */
function invalidIf(invalid: boolean): Html | string {
  return invalid ? html` aria-invalid="true" aria-errormessage="filter-error"` : '';
}

function select(name: string, label: string, current: string | undefined, options: ReadonlyArray<readonly [string, string]>, invalid = false): Html {
  return html`<div><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}"${invalidIf(invalid)}><option value="">All</option>${options.map(
    ([value, text]) => html`<option value="${value}"${current === value ? html` selected` : ''}>${text}</option>`,
  )}</select></div>`;
}

/** Fields of an event record that only newer services carry (value, customer id): read when present. */
function extra(event: EventRecord, key: 'value' | 'currency' | 'customer_id'): unknown {
  return (event as unknown as Record<string, unknown>)[key];
}

/** Who converted: the email masked (the trace shows it whole), the customer id when the backend sent one. */
function who(event: EventRecord): Html {
  const email = maskedEmail(event.email);
  const customerId = extra(event, 'customer_id');
  if (!email && typeof customerId !== 'string') return html`<span class="muted">unknown</span>`;
  return html`${email ? html`<span title="Email, masked">${email}</span>` : ''}${typeof customerId === 'string' && customerId ? html`<span class="hint">customer <code>${customerId}</code></span>` : ''}`;
}

/** Whether an action was stopped by an erasure (stored as failed, code `erased`): nothing to fix. */
export function erasedAction(action: { status: string; error: unknown }): boolean {
  return action.status === 'failed' && (action.error as { code?: unknown } | null)?.code === ERASED_ERROR_CODE;
}

/** An action's status badge: `erased` (plain) for one an erasure stopped, else its status. */
export function actionBadge(action: { status: string; error: unknown }): Html {
  return erasedAction(action) ? html`<span class="badge" title="Its person was erased: it is never sent">erased</span>` : badge(action.status);
}

/** Whether the event's person was erased: it is never sent again (redeliver answers 409 event_erased). */
export function isErased(event: EventRecord): boolean {
  return (event as { erased?: unknown }).erased === true;
}

/** The badge of the conversion's latest adjustment (retracted, restated), or '' when it was never adjusted. */
export function adjustedBadge(event: EventRecord): Html | string {
  const latest = standingAdjustment(event.adjustments ?? [])?.type;
  return latest === 'retract' ? html`<span class="badge bad">retracted</span>` : latest === 'restate' ? html`<span class="badge">restated</span>` : '';
}

/**
 * The value as the conversion now stands: after a retraction the reported value struck through and "retracted", after
 * a restatement the new value and "restated" (the trace shows every step).
 */
export function currentValue(event: EventRecord): Html | string | null {
  const reported = moneyOf(extra(event, 'value'), extra(event, 'currency'));
  const latest = standingAdjustment(event.adjustments ?? []);
  if (latest?.type === 'retract') return html`${reported ? html`<s>${reported}</s> ` : ''}${adjustedBadge(event)}`;
  if (latest?.type === 'restate') {
    const now = moneyOf(latest.value, latest.currency);
    return html`${now ?? reported ?? ''} ${adjustedBadge(event)}${reported ? html`<div class="hint">reported ${reported}</div>` : ''}`;
  }
  return reported;
}

function eventRow(event: EventRecord): Html {
  const money = currentValue(event);
  return html`<tr>
<td data-label="Occurred"><a href="/dashboard/events/${event.id}">${when(event.occurred_at)}</a></td>
<td data-label="Who" class="who-cell">${who(event)}</td>
<td data-label="Value">${money ?? html`<span class="muted">—</span>`}</td>
<td data-label="Flow" class="text">${event.flow_name ?? html`<span class="muted">—</span>`}<div class="hint">${event.trigger_type === 'conversion' ? `stage ${String(event.stage ?? '')}` : triggerLabel(event.trigger)}</div></td>
<td data-label="Match">${badge(event.match_quality)}</td>
<td data-label="Status">${isErased(event) ? html`<span class="badge" title="Its person was erased: it is never sent again">erased</span>` : badge(event.status)}</td>
<td data-label="Destinations">${
    event.actions.length === 0
      ? html`<span class="muted">none</span>`
      : html`<ul class="dests">${event.actions.map((a) => html`<li><span>${platformFor(a.destination)?.label ?? a.destination}</span> ${actionBadge(a)}</li>`)}</ul>`
  }</td>
<td><a href="/dashboard/events/${event.id}" aria-label="Trace of the conversion at ${String(event.occurred_at).slice(0, 19).replace('T', ' ')}">Trace</a></td>
</tr>`;
}

/** What the page says while reports of a burst wait for their events. */
function awaitingText(count: number): string {
  const reports = count === 1 ? '1 report' : `${count.toLocaleString('en-US')} reports`;
  return `${reports} received in a burst ${count === 1 ? 'is' : 'are'} stored and answered; ${count === 1 ? 'its' : 'their'} events are being built and appear here shortly (reload to see them).`;
}

/** The Events page. */
export function eventsPage(session: DashboardSession, data: EventsPageData, notices: Notice[] = []): string {
  const f = data.filters;
  return layout(
    { title: 'Events', nav: 'events', session, notices },
    html`<h1>Events</h1>
<p class="lead">Every conversion cnv captured, newest first, with each destination's result.</p>
${data.awaitingEvents ? html`<div class="notice" role="status" id="awaiting-events">${awaitingText(data.awaitingEvents)}</div>` : ''}
<section class="card" id="chart">
<div class="chart-title"><h2>${data.chartView === 'value' ? 'Value per day' : 'Deliveries per day'}</h2>
<nav class="segmented" aria-label="Chart shows">${(['conversions', 'value'] as const).map(
    (view) => html`<a href="/dashboard/events${eventsQuery(f, data.cursor, view)}#chart"${view === data.chartView ? html` aria-current="true"` : ''}>${view === 'value' ? 'Value' : 'Conversions'}</a>`,
  )}</nav></div>
${data.chart}
</section>
<section class="card">
<form method="get" action="/dashboard/events">
<div class="grid filters">
${select('site_id', 'Site', f.site_id, data.sites.map((s) => [s.id, s.name] as const), data.errorField === 'site_id')}
${select('flow_id', 'Flow', f.flow_id, data.flows.map((fl) => [fl.id, fl.name] as const), data.errorField === 'flow_id')}
${select('status', 'Status', f.status, data.statuses.map((s) => [s, s] as const), data.errorField === 'status')}
<div><label for="f-email">Email</label><input type="search" id="f-email" name="email" value="${f.email ?? ''}" placeholder="an email" aria-describedby="f-email-hint"${invalidIf(data.errorField === 'email')}><span class="hint" id="f-email-hint">${data.identityDays ? `Searches the last ${data.identityDays} days (older events keep no email)` : 'Recent events'}</span></div>
<div><label for="f-from">From (UTC)</label><input type="date" id="f-from" name="from" value="${f.from ?? ''}"${invalidIf(data.errorField === 'from')}></div>
<div><label for="f-to">To (UTC)</label><input type="date" id="f-to" name="to" value="${f.to ?? ''}"${invalidIf(data.errorField === 'to')}></div>
</div>
${data.chartView === 'value' ? html`<input type="hidden" name="chart" value="value">` : ''}
<div class="actions"><button type="submit">Filter</button><a href="/dashboard/events${data.chartView === 'value' ? '?chart=value' : ''}">Clear</a></div>
</form>
</section>
${data.error ? html`<div class="notice bad" role="alert" id="filter-error">${data.error} Nothing was searched: correct the filter above.</div>` : html`<section class="card">
${
  data.events.length === 0
    ? Object.values(f).some(Boolean)
      ? html`<p class="muted">No events match these filters.</p>`
      : html`<p class="muted">No events yet. A conversion shows here once a live flow fires: <a href="/dashboard/setup/checklist">the setup checklist</a> says what is left.</p>`
    : html`<div class="table-wrap"><table class="stack wide"><caption class="visually-hidden">Conversions, newest first</caption><thead><tr><th scope="col">Occurred</th><th scope="col">Who</th><th scope="col">Value</th><th scope="col">Flow</th><th scope="col">Match</th><th scope="col">Status</th><th scope="col">Destinations</th><th scope="col"><span class="visually-hidden">Trace</span></th></tr></thead>
<tbody>${data.events.map(eventRow)}</tbody></table></div>`
}
<div class="pager">
${data.cursor ? html`<a href="/dashboard/events${eventsQuery(f, undefined, data.chartView)}">← Newest</a>` : html`<span></span>`}
${data.nextCursor ? html`<a class="button secondary" href="/dashboard/events${eventsQuery(f, data.nextCursor, data.chartView)}">Older →</a>` : ''}
</div>
</section>`}`,
  );
}
