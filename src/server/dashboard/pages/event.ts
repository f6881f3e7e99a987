/**
 * An event's page: the conversion traced end to end. The landing (click ids, UTM, landing page), the correlation token,
 * the report, the pairing and its match quality, and each destination's delivery: the request sent (PII-free summary,
 * and Google's later diagnostics), what the platform answered, and for a failure the hint in plain words.
 */
import type { EventActionRecord, EventRecord } from '../../api/events';
import { platformFor } from '../../destinations';
import { badge, html, layout, postButton, when, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import { actionBadge, adjustedBadge, erasedAction, isErased, moneyOf } from './events';
import { triggerLabel } from '../labels';
import { matchKeysOf } from './match-keys';

const MATCH_REASONS: Record<string, string> = {
  paired: "The report's correlation token found the loader's snapshot: the click travels with the conversion.",
  snapshot_pending: "The report has a correlation token; its snapshot has not arrived yet (delivery waits a few seconds for it).",
  snapshot_missing: 'The report had a correlation token, but no snapshot arrived for it: delivered with the identity fields only.',
  no_correlation_token: 'The report came without a correlation token (the visitor never went through the loader): identity fields only.',
};

/** What a queued adjustment result without a reason of its own waits for. */
const ADJUSTMENT_WAITING =
  'Waits for the conversion itself: applied to its first send if it has not gone out yet, else sent right after it.';

const MATCH_QUALITY: Record<string, string> = {
  high: "The visitor's landing carried an ad click id. Each platform gets only its own (a gclid reaches Google, not Meta): see each delivery's match keys.",
  medium: 'The visitor came through the loader, but with no ad click id: hashed identifiers and browser ids only.',
  low: 'Identity fields only (hashed): no click data.',
};

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function pairs(value: Record<string, unknown> | null): Html {
  const entries = Object.entries(value ?? {}).filter(([, v]) => v !== null && v !== undefined && v !== '');
  if (entries.length === 0) return html`<span class="muted">none</span>`;
  return html`${entries.map(([k, v]) => html`<div><span class="hint">${k}</span> <code>${typeof v === 'string' ? v : JSON.stringify(v)}</code></div>`)}`;
}

function fact(label: string, value: Html | string | null | undefined): Html {
  return html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? html`<span class="muted">—</span>` : value}</dd>`;
}

function landing(event: EventRecord): Html {
  const touch = record(event.touch);
  const clickIds = event.click_ids ?? record(touch?.click_ids);
  const utm = record(event.utm) ?? record(touch?.utm);
  const landingPage = text(event.landing_page_url) ?? text(touch?.landing_page_url);
  const referrer = text(event.landing_referrer) ?? text(touch?.referrer);
  const captured = text(event.touch_captured_at) ?? text(touch?.captured_at);
  if (!clickIds && !utm && !landingPage && !referrer) {
    const why = isErased(event)
      ? 'Its person was erased: the click and the landing went with their data.'
      : "No landing data: the loader's snapshot was not paired with this conversion, so no click or UTM travels with it.";
    return html`<li><h3>Landing</h3><p class="muted">${why}</p></li>`;
  }
  return html`<li><h3>Landing</h3>
<dl class="facts">
${fact('Click ids', pairs(clickIds as Record<string, unknown> | null))}
${fact('UTM', pairs(utm))}
${fact('Landing page', landingPage ? html`<code>${landingPage}</code>` : null)}
${fact('Referrer', referrer ? html`<code>${referrer}</code>` : null)}
${fact('Click captured', captured ? when(captured) : null)}
${record(event.received_click_ids) ? fact('Other click ids seen', pairs(record(event.received_click_ids))) : ''}
</dl></li>`;
}

function correlation(event: EventRecord): Html {
  const token = text(event.correlation_token);
  if (!token) {
    const why = isErased(event)
      ? 'Its person was erased: the correlation token is gone with the click data.'
      : html`No correlation token: the report came without the <code>cnv_signup_correlation</code> cookie (the visitor never went through the loader, or the backend did not pass it on).`;
    return html`<li><h3>Signup intent and correlation token</h3><p class="muted">${why}</p></li>`;
  }
  // A later stage without a token of its own carries its customer's signup's.
  const signup = event.trigger_type === 'conversion' && text(event.match) === 'identity' ? text(event.signup_customer_event_id) : null;
  return html`<li><h3>Signup intent and correlation token</h3>
<dl class="facts">
${fact('Correlation token', html`<code>${token}</code>${signup ? html` <span class="hint">the signup ${signup}'s (found by customer id)</span>` : ''}`)}
${fact('Intent page', text(event.page_url) ? html`<code>${text(event.page_url)}</code>` : null)}
${fact('Snapshot taken', text(event.snapshot_occurred_at) ? when(text(event.snapshot_occurred_at)) : null)}
</dl></li>`;
}

function report(event: EventRecord): Html {
  const form = event.trigger === 'form_submission';
  return html`<li><h3>${form ? 'Form submission' : event.trigger_type === 'conversion' ? `Later stage from your backend: ${text(event.stage) ?? ''}` : 'Report from your backend'}</h3>
<dl class="facts">
${fact('Trigger', event.trigger_type === 'conversion' ? `Later stage from your backend (${text(event.stage) ?? 'stage'})` : triggerLabel(event.trigger))}
${fact('Flow', event.flow_name ? html`${event.flow_name} <span class="hint">${event.flow_id ?? ''}</span>` : null)}
${form ? fact('Form', html`${text(event.integration) ?? ''} ${text(event.form_id) ? html`<code>${text(event.form_id)}</code>` : ''}`) : fact('Trigger key', text(event.trigger_key) ? html`<code>${text(event.trigger_key)}</code>` : null)}
${form ? fact('Submission id', text(event.submission_id)) : fact('customer_event_id', event.customer_event_id ? html`<code>${event.customer_event_id}</code>` : null)}
${fact('Email', event.email)}
${customerFacts(event)}
${event.trigger_type === 'conversion' ? fact('Click found by', stageMatch(text(event.match), text(event.signup_customer_event_id))) : ''}
${fact('Occurred', when(event.occurred_at))}
${fact('Recorded', when(event.created_at))}
</dl></li>`;
}

/** The customer id and value a report carried (fields of newer services: shown when present). */
function customerFacts(event: EventRecord): Html {
  const fields = event as unknown as Record<string, unknown>;
  const customerId = text(fields.customer_id);
  const money = moneyOf(fields.value, fields.currency);
  return html`${customerId ? fact('Customer id', html`<code>${customerId}</code>`) : ''}${money ? fact('Value', money) : ''}`;
}

/** Why the event paired as it did, in words: the trace's Pairing step. */
function pairingWhy(event: EventRecord): string | null {
  if (isErased(event)) return 'Its person was erased: the correlation token and the click data are gone.';
  const reason = text(event.match_reason);
  if (reason === 'paired' && event.trigger_type === 'conversion' && text(event.match) === 'identity') {
    return "The correlation token of its customer's signup (found by customer id) found the loader's snapshot, or once that snapshot's retention had passed, the click the signup's event kept: the click travels with this stage.";
  }
  if (reason) return MATCH_REASONS[reason] ?? reason;
  return event.trigger === 'form_submission' ? 'A form submission carries its own click data: no pairing needed.' : null;
}

function pairing(event: EventRecord): Html {
  return html`<li><h3>Pairing</h3>
<dl class="facts">
${fact('Match quality', html`${badge(event.match_quality)} ${event.match_quality ? (MATCH_QUALITY[event.match_quality] ?? '') : ''}`)}
${fact('Why', pairingWhy(event))}
</dl></li>`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * The conversion an action fires, as its platform names it: the action's conversion id (Google Ads, Microsoft), else
 * what the request summary names: Meta's `event_name`, LinkedIn's rule (`conversion`, a URN), Reddit's
 * `type.custom_event_name` or `type.tracking_type`, TikTok's `event`.
 */
function conversionOf(action: EventActionRecord, request: Record<string, unknown> | null): Html | null {
  if (action.conversion_id) return html`<code>${action.conversion_id}</code>`;
  if (!request) return null;
  const redditType = record(request.type);
  const named = [
    request.event_name, request.conversion_name, request.conversion, request.event, redditType?.custom_event_name, redditType?.tracking_type,
    request.tracking_type,
  ].find((v) => typeof v === 'string' && v !== '');
  return typeof named === 'string' ? html`<code>${named}</code>` : null;
}

function delivery(action: EventActionRecord, index: number): Html {
  const error = record(action.error) as { code?: string; message?: string; hint?: string; status?: number } | null;
  const request = action.request ? { ...action.request } : null;
  const diagnostics = request ? record(request.diagnostics) : null;
  if (request) delete request.diagnostics;
  return html`<div class="card" id="action-${index}" style="margin:8px 0 0">
<h3 style="margin-top:0">${platformFor(action.destination)?.label ?? action.destination} ${actionBadge(action)}</h3>
${
  erasedAction(action)
    ? html`<div class="notice">${error?.message ?? 'Not sent: its person was erased.'}</div>`
    : action.status === 'failed' && error
      ? html`<div class="notice bad" role="alert"><strong>Why it failed:</strong> ${error.message ?? error.code ?? 'unknown error'}
${error.hint ? html`<br><strong>What to do:</strong> ${error.hint}` : ''}</div>`
      : error?.code === 'reauthorization_required'
        ? html`<div class="notice warn" role="status">Waits for ${platformFor(action.destination)?.label ?? action.destination} to be connected again; nothing is lost. <a href="/dashboard/destinations">Reconnect it on Destinations</a></div>`
        : ''
}
<dl class="facts">
${fact('Conversion', conversionOf(action, request))}
${action.status === 'skipped' || erasedAction(action) ? '' : matchKeysFact(action.destination, request)}
${fact('Attempts', String(action.attempts))}
${fact('Delivered', action.delivered_at ? when(action.delivered_at) : null)}
${fact(
  'Platform answered',
  error && !erasedAction(action)
    ? html`${error.status ? html`HTTP ${error.status} · ` : ''}<code>${error.code ?? ''}</code> ${error.message ?? ''}${error.hint && action.status !== 'failed' ? html`<div class="hint">${error.hint}</div>` : ''}`
    : action.status === 'delivered'
      ? 'accepted'
      : null,
)}
</dl>
${request ? html`<h3>Request sent <span class="hint">(summary, no personal data)</span></h3><pre>${json(request)}</pre>` : ''}
${attempts(action)}
${
  diagnostics
    ? html`<h3>Platform diagnostics ${badge(text(diagnostics.state))}</h3><p>${text(diagnostics.message) ?? ''}</p><pre>${json(diagnostics)}</pre>`
    : ''
}
</div>`;
}

/**
 * The keys the platform got to match the conversion on, and, when none of them ties it to an ad click or a person (no
 * click id, email, phone or platform browser id), what to do so the next ones attribute.
 */
function matchKeysFact(destination: string, request: Record<string, unknown> | null): Html | string {
  const keys = matchKeysOf(destination, request);
  if (!keys) return '';
  const label = platformFor(destination)?.label ?? destination;
  const list = keys.keys.length > 0 ? keys.keys.join(' · ') : 'none';
  const advice = keys.strong
    ? keys.click
      ? ''
      : html`<div class="hint">No ${label} click id: ${label} matches this conversion on the keys above only, and credits an ad only if it recognises the person.</div>`
    : html`<div class="notice warn" role="status">Few match keys: no click id, email, phone or ${label} browser id went, so ${label} is unlikely to credit an ad with this conversion. Send the email (or phone) with the report, and keep the loader on your landing pages so the ad click is kept.</div>`;
  return fact('Match keys', html`${list}${advice}`);
}

/** Every send of the action, oldest first: when, what came of it, and what the platform answered. */
function attempts(action: EventActionRecord): Html | string {
  const history = action.history ?? [];
  if (history.length < 2 && !history.some((h) => h.outcome !== 'delivered')) return '';
  return html`<h3>Attempts</h3>
<ol class="attempts">
${history.map((h) => {
  const error = record(h.error) as { code?: string; message?: string; hint?: string; status?: number } | null;
  return html`<li>${when(h.at)} · ${badge(h.outcome === 'retry' ? 'retrying' : h.outcome)}${
    error ? html` · ${error.status ? html`HTTP ${error.status} · ` : ''}<code>${error.code ?? ''}</code> ${error.message ?? ''}` : ''
  }</li>`;
})}
</ol>`;
}

/** The badge of a restatement stored superseded (webhook/adjustment-sql.ts): never sent, and not the conversion's value. */
const SUPERSEDED = html`<span class="badge" title="Dated before the restatement its conversion stood at when it arrived: never sent, and not the conversion’s value">superseded</span>`;

/** The adjustments of a conversion in the order they arrived, each a further step with a result per destination. */
function adjustmentsOf(event: EventRecord): Html[] {
  return (event.adjustments ?? []).map(
    (a) => html`<li><h3>${a.type === 'restate' ? 'Restated' : 'Retracted'} <span class="hint">${a.adjustment_id}</span>${a.superseded ? html` ${SUPERSEDED}` : ''}</h3>
<dl class="facts">
${a.type === 'restate' ? fact('New value', moneyOf(a.value, a.currency)) : ''}
${fact('Occurred', when(a.occurred_at))}
${a.results.map((r) => fact(platformFor(r.destination)?.label ?? r.destination, html`${badge(r.status)} ${r.reason ?? (r.status === 'queued' ? ADJUSTMENT_WAITING : '')}`))}
</dl></li>`,
  );
}

/** An event's trace. */
export function eventPage(session: DashboardSession, event: EventRecord, notices: Notice[] = []): string {
  // An erased event is never sent again (POST /v1/events/{id}/redeliver answers 409 event_erased).
  const failed = event.actions.some((a) => a.status === 'failed') && !isErased(event);
  return layout(
    { title: `Event ${event.id}`, nav: 'events', session, notices },
    html`<p><a href="/dashboard/events">← Events</a></p>
<h1>Conversion ${isErased(event) ? html`<span class="badge" title="Its person was erased: it is never sent again">erased</span>` : badge(event.status)} ${adjustedBadge(event)}</h1>
<p class="lead"><code>${event.id}</code> · ${event.flow_name ?? 'no flow'} · ${when(event.occurred_at)}</p>
<section class="card">
<ol class="trace">
${event.trigger === 'form_submission' ? '' : html`${landing(event)}${correlation(event)}`}
${event.trigger === 'form_submission' ? landing(event) : ''}
${report(event)}
${pairing(event)}
<li><h3>Delivery</h3>
${event.actions.length === 0 ? html`<p class="muted">The flow had no action.</p>` : event.actions.map(delivery)}
${failed ? html`<div class="actions"><p class="muted">Fixed the cause? The failed deliveries go again with the same ids, so a platform that already has one counts it once. The same cause failed many? <a href="/dashboard/destinations">Destinations</a> sends all of a platform's failed deliveries again.</p>${postButton(session, `/dashboard/events/${event.id}/redeliver`, 'Send failed deliveries again')}</div>` : ''}
</li>
${adjustmentsOf(event)}
</ol>
</section>`,
  );
}

/**
 * How a later stage found its click, in words: through its own token, through its customer's signup, or not at all
 * (when a signup was found without a click, its identity fields still completed the stage's; when none was found, why
 * that may be: reported after the stage, or its customer id cleared by the identity retention, as for a yearly renewal).
 */
function stageMatch(match: string | null, signup: string | null): string | null {
  if (!match) return null;
  if (match === 'none') {
    return signup
      ? `none: the signup ${signup} (same customer id) had no click; its identity fields (email, phone, names) went with the stage`
      : 'none: no signup with this customer id was reported before the stage (or it is past the identity retention, which clears customer ids), so no ad click went with it: only its own email and phone';
  }
  return signup ? `${match} (the signup ${signup})` : match;
}
