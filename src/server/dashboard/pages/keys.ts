/** The API keys page: the account's keys (first characters only), create (shown once), revoke. */
import type { ApiKeyRow } from '../../accounts';
import { badge, copyable, csrfField, html, layout, when, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';

/** The API keys page; `created` is a key just made, shown this once. */
export function keysPage(
  session: DashboardSession,
  keys: readonly ApiKeyRow[],
  apiBase: string,
  created?: { id: string; key: string },
  notices: Notice[] = [],
): string {
  return layout(
    { title: 'API keys', nav: 'keys', session, notices },
    html`<h1>API keys</h1>
<p class="lead">Keys for the REST API (<code>Authorization: Bearer …</code>) and agent tools. Each key is shown once, when it is made, and stored only as a hash.</p>
${
  created
    ? html`<section class="card secret"><h2>Your new API key</h2>
<p><strong>Copy it now: it is shown only this once.</strong></p>
${copyable('new-key', created.key)}
<p class="hint">Try it: <code>curl -H "Authorization: Bearer ${created.key.slice(0, 12)}…" ${apiBase}/v1/sites</code></p></section>`
    : ''
}
<section class="card">
<h2>Create a key</h2>
<form method="post" action="/dashboard/keys">
${csrfField(session)}
<label for="key-label">Label <span class="hint">A note to tell keys apart, e.g. "production backend".</span><input type="text" id="key-label" name="label" maxlength="200"></label>
<div class="actions"><button type="submit">Create key</button></div>
</form>
</section>
<section class="card">
<h2>Keys</h2>
${
  keys.length === 0
    ? html`<p class="muted">No API keys.</p>`
    : html`<div class="table-wrap"><table class="stack"><thead><tr><th>Starts with</th><th>Label</th><th>Created</th><th>Last used</th><th>Status</th><th><span class="visually-hidden">Revoke</span></th></tr></thead><tbody>
${keys.map(
  (k) => html`<tr id="${k.id}"><td data-label="Key"><code class="nowrap">${k.prefix}…</code></td><td data-label="Label" class="text">${k.label || html`<span class="muted">—</span>`}</td>
<td data-label="Created">${when(k.created_at)}</td>
<td data-label="Last used">${k.last_used_at ? when(k.last_used_at) : html`<span class="muted">never</span>`}</td>
<td data-label="Status">${k.revoked_at ? html`${badge('revoked')} <span class="hint">${when(k.revoked_at)}</span>` : badge('active')}</td>
<td>${
    k.revoked_at
      ? ''
      : html`<form method="post" action="/dashboard/keys/${k.id}/revoke" data-confirm="Revoke ${k.prefix}…? Requests with it are refused from now on.">${csrfField(session)}<button type="submit" class="danger">Revoke</button></form>`
  }</td></tr>`,
)}</tbody></table></div>`
}
</section>`,
  );
}
