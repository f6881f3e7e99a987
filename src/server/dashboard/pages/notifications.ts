/**
 * The notifications page: the account's endpoints (create: the signing secret shown once; delete), and the latest
 * notifications with every attempt (when, what the receiver answered, how long it took).
 */
import type { EndpointRecord } from '../../api/notification-endpoints';
import type { NotificationRecord } from '../../notifications';
import { NOTIFICATION_KINDS } from '../../notifications';
import { badge, copyable, csrfField, fieldAttributes, fieldError, formErrorSummary, html, layout, when, type Notice } from '../layout';
import { actionFieldOf } from '../action-fields';
import type { DashboardSession } from '../sessions';

export interface NotificationsData {
  endpoints: EndpointRecord[];
  recent: NotificationRecord[];
  /** An endpoint just made, with its secret, shown this once. */
  created?: EndpointRecord & { secret: string };
  /** A refused form: the message, the API parameter it names (`url` or `kinds`), and what was entered. */
  error?: { message: string; param?: string; url: string; kinds?: readonly string[] };
}

/**
 * A refusal in the form's words: the field is the URL, not the API's `url` parameter, and "absolute URL" is said as
 * what to type.
 */
export function endpointProblemInWords(message: string): string {
  if (/^url must be an absolute URL/.test(message)) return 'Enter the whole address, starting with https://, e.g. https://example.com/webhooks/cnv.';
  return message.replace(/^url /, 'The URL ');
}

/** Each kind in words: a short name, and when it is sent. */
const KINDS: Record<string, { name: string; hint: string }> = {
  'event.failed': { name: 'A conversion failed', hint: 'a conversion could not be delivered to a platform, for good' },
  'destination.reauthorization_required': {
    name: 'A platform needs reconnecting',
    hint: 'a platform refused cnv’s authorization: its conversions wait until you connect it again',
  },
  'destination.recovered': { name: 'A platform recovered', hint: 'a reconnected platform receives the waiting conversions again' },
};

function kindName(kind: string): string {
  return KINDS[kind]?.name ?? kind;
}

/** Each attempt: when, what the receiver answered (or why there was no answer), how long it took. */
function attempts(n: NotificationRecord) {
  if (n.history.length === 0) return html`<span class="muted">not sent yet</span>`;
  return html`<ol class="attempts">${n.history.map(
    (a) =>
      html`<li>${when(new Date(a.at))} · ${a.status === null ? html`no answer${a.error ? html`: ${a.error}` : ''}` : html`<strong>HTTP ${a.status}</strong>`} <span class="hint">${a.duration_ms} ms</span></li>`,
  )}</ol>`;
}

/** What a notification is about: its reason, and the event or platform it names. */
function about(n: NotificationRecord) {
  const data = n.data;
  if (!data) return '';
  const platform = data.destination ? actionFieldOf(data.destination.type).platformLabel : null;
  const link = data.event_id
    ? html`<a href="/dashboard/events/${data.event_id}">the event${platform ? html` (${platform})` : ''}</a>`
    : platform
      ? html`<a href="/dashboard/destinations">${platform}</a>`
      : '';
  return html`<div class="about">${data.reason}${link ? html` <span class="hint">· ${link}</span>` : ''}</div>`;
}

export function notificationsPage(session: DashboardSession, data: NotificationsData, notices: Notice[] = []): string {
  const error = data.error ? { ...data.error, message: endpointProblemInWords(data.error.message) } : undefined;
  const badUrl = error !== undefined && error.param !== 'kinds';
  const badKinds = error?.param === 'kinds';
  // A form sent back keeps the kinds ticked as they were sent; a new one has them all.
  const ticked = (kind: string) => !error?.kinds || error.kinds.includes(kind);
  const endpointUrl = new Map(data.endpoints.map((e) => [e.id, e.url]));
  // With one endpoint, every notification goes to it: its url is said once, above.
  const showTo = new Set(data.recent.map((n) => n.endpoint_id)).size > 1 || data.endpoints.length > 1;
  return layout(
    { title: 'Notifications', nav: 'notifications', session, notices },
    html`<h1>Notifications</h1>
<p class="lead">cnv POSTs a signed notification (Standard Webhooks) to your endpoints when a conversion fails for good, when a platform refuses cnv’s authorization, and when it recovers. A receiver answers 2xx within 10 s; otherwise cnv tries again for about a day.</p>
${
  data.created
    ? html`<section class="card secret"><h2>Signing secret of <span class="url">${data.created.url}</span></h2>
<p><strong>Copy it now: it is shown only this once.</strong> Verify each notification with it (any Standard Webhooks library).</p>
${copyable('new-secret', data.created.secret)}</section>`
    : ''
}
<section class="card">
<h2>Add an endpoint</h2>
${error ? formErrorSummary('endpoint-error', error.message, badKinds ? 'endpoint-kinds' : 'endpoint-url') : ''}
<form method="post" action="/dashboard/notifications">
${csrfField(session)}
<label for="endpoint-url">URL <span class="hint">https; plain http only to localhost for development. Redirects are not followed.</span>
<input type="url" id="endpoint-url" name="url" required maxlength="2000" placeholder="https://example.com/webhooks/cnv" value="${error?.url ?? ''}"${fieldAttributes('endpoint-url', [], badUrl)}></label>
${fieldError('endpoint-url', badUrl ? error?.message : null)}
<fieldset class="kinds" id="endpoint-kinds"${badKinds ? html` aria-describedby="endpoint-kinds-error"` : ''}><legend>Tell me when</legend>
${fieldError('endpoint-kinds', badKinds ? error?.message : null)}
${NOTIFICATION_KINDS.map(
  (k) => html`<label class="option"><input type="checkbox" name="kind:${k}" value="1"${ticked(k) ? html` checked` : ''}${badKinds ? html` aria-invalid="true"` : ''}><span><strong>${kindName(k)}</strong> <code>${k}</code><span class="hint">${KINDS[k]?.hint ?? ''}</span></span></label>`,
)}
</fieldset>
<div class="actions"><button type="submit">Add endpoint</button></div>
</form>
</section>
<section class="card">
<h2>Endpoints</h2>
${
  data.endpoints.length === 0
    ? html`<p class="muted">No endpoints: nobody is told when something breaks.</p>`
    : html`<div class="table-wrap"><table class="stack endpoints"><thead><tr><th>URL</th><th>Tells</th><th>Added</th><th><span class="visually-hidden">Remove</span></th></tr></thead><tbody>
${data.endpoints.map(
  (e) => html`<tr id="${e.id}"><td data-label="URL"><span class="url">${e.url}</span></td>
<td data-label="Tells">${e.kinds.length === NOTIFICATION_KINDS.length ? 'Every kind' : html`<ul class="plain">${e.kinds.map((k) => html`<li>${kindName(k)}</li>`)}</ul>`}</td>
<td data-label="Added">${when(new Date(e.created_at))}</td>
<td><form method="post" action="/dashboard/notifications/${e.id}/delete" data-confirm="Remove ${e.url}? Its pending notifications are dropped.">${csrfField(session)}<button type="submit" class="danger">Remove</button></form></td></tr>`,
)}</tbody></table></div>`
}
</section>
<section class="card">
<h2>Latest notifications</h2>
${
  data.recent.length === 0
    ? html`<p class="muted">Nothing was sent yet.</p>`
    : html`<div class="table-wrap"><table class="stack notifications"><thead><tr><th>Notification</th><th>Status</th><th>Attempts</th></tr></thead><tbody>
${data.recent.map(
  (n) => html`<tr><td data-label="Notification"><strong>${kindName(n.kind)}</strong> <code>${n.kind}</code>${about(n)}
<div class="hint">${when(n.created_at)}${showTo ? html` · to <span class="url">${endpointUrl.get(n.endpoint_id) ?? n.endpoint_id}</span>` : ''}</div>
<div class="hint">webhook-id <span class="mono">${n.message_id}</span></div></td>
<td data-label="Status">${badge(n.status === 'pending' ? 'queued' : n.status)}${n.status === 'pending' && n.attempts > 0 ? html`<div class="hint">next try ${when(n.due_at)}</div>` : ''}</td>
<td data-label="Attempts">${attempts(n)}</td></tr>`,
)}</tbody></table></div>`
}
</section>`,
  );
}
