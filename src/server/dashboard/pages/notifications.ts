/**
 * The notifications page: the account's endpoints (create: the signing secret shown once; delete), and the latest
 * notifications with every attempt (when, what the receiver answered, how long it took).
 */
import type { EndpointRecord } from '../../api/notification-endpoints';
import type { NotificationRecord } from '../../notifications';
import { NOTIFICATION_KINDS } from '../../notifications';
import { badge, copyable, csrfField, html, layout, when, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';

export interface NotificationsData {
  endpoints: EndpointRecord[];
  recent: NotificationRecord[];
  /** An endpoint just made, with its secret, shown this once. */
  created?: EndpointRecord & { secret: string };
  /** A refused form, with what was entered. */
  error?: { message: string; url: string };
}

const KIND_HINTS: Record<string, string> = {
  'event.failed': 'a conversion could not be delivered to a platform',
  'destination.reauthorization_required': 'a platform refused cnv’s authorization: conversions wait until you reconnect',
  'destination.recovered': 'a reconnected platform receives the waiting conversions again',
};

function attempts(n: NotificationRecord) {
  if (n.history.length === 0) return html`<span class="muted">not sent yet</span>`;
  return html`<ol class="attempts">${n.history.map(
    (a) => html`<li>${when(new Date(a.at))} · ${a.status === null ? html`no answer` : html`HTTP ${a.status}`}${a.error ? html` · ${a.error}` : ''} <span class="hint">${a.duration_ms} ms</span></li>`,
  )}</ol>`;
}

export function notificationsPage(session: DashboardSession, data: NotificationsData, notices: Notice[] = []): string {
  const endpointUrl = new Map(data.endpoints.map((e) => [e.id, e.url]));
  return layout(
    { title: 'Notifications', nav: 'notifications', session, notices },
    html`<h1>Notifications</h1>
<p class="lead">cnv POSTs a signed notification (Standard Webhooks) to your endpoints when a conversion fails for good, when a platform refuses cnv’s authorization, and when it recovers. A receiver answers 2xx within 10 s; otherwise cnv tries again for about a day.</p>
${
  data.created
    ? html`<section class="card secret"><h2>Signing secret of ${data.created.url}</h2>
<p><strong>Copy it now: it is shown only this once.</strong> Verify each notification with it (any Standard Webhooks library).</p>
${copyable('new-secret', data.created.secret)}</section>`
    : ''
}
<section class="card">
<h2>Add an endpoint</h2>
${data.error ? html`<div class="notice bad" role="alert">${data.error.message}</div>` : ''}
<form method="post" action="/dashboard/notifications">
${csrfField(session)}
<label for="endpoint-url">URL <span class="hint">https; plain http only to localhost for development. Redirects are not followed.</span>
<input type="url" id="endpoint-url" name="url" required maxlength="2000" placeholder="https://example.com/webhooks/cnv" value="${data.error?.url ?? ''}"></label>
<fieldset><legend>Tell me when</legend>
${NOTIFICATION_KINDS.map((k) => html`<label class="check"><input type="checkbox" name="kind:${k}" value="1" checked> <code>${k}</code> <span class="hint">${KIND_HINTS[k] ?? ''}</span></label>`)}
</fieldset>
<div class="actions"><button type="submit">Add endpoint</button></div>
</form>
</section>
<section class="card">
<h2>Endpoints</h2>
${
  data.endpoints.length === 0
    ? html`<p class="muted">No endpoints: nobody is told when something breaks.</p>`
    : html`<div class="table-wrap"><table class="stack"><thead><tr><th>URL</th><th>Kinds</th><th>Added</th><th></th></tr></thead><tbody>
${data.endpoints.map(
  (e) => html`<tr id="${e.id}"><td data-label="URL"><code>${e.url}</code></td><td data-label="Kinds">${e.kinds.map((k) => html`<code>${k}</code> `)}</td>
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
    : html`<div class="table-wrap"><table class="stack"><thead><tr><th>Kind</th><th>To</th><th>Status</th><th>Attempts</th></tr></thead><tbody>
${data.recent.map(
  (n) => html`<tr><td data-label="Kind"><code>${n.kind}</code><div class="hint">${when(n.created_at)} · <code>${n.message_id}</code></div></td>
<td data-label="To"><code>${endpointUrl.get(n.endpoint_id) ?? n.endpoint_id}</code></td>
<td data-label="Status">${badge(n.status === 'pending' ? 'queued' : n.status)}${n.status === 'pending' && n.attempts > 0 ? html`<div class="hint">next try ${when(n.due_at)}</div>` : ''}</td>
<td data-label="Attempts">${attempts(n)}</td></tr>`,
)}</tbody></table></div>`
}
</section>`,
  );
}
