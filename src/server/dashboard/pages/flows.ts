/**
 * The Flows page: each flow with its trigger, actions and status (publish, unpublish); for an API trigger the webhook
 * URL, a client snippet and the webhook secret (shown once, rotatable); and the form that creates a flow.
 */
import type { FlowRecord } from '../../api/flows';
import type { SiteRecord } from '../../api/sites';
import type { DestinationRecord } from '../../api/destinations';
import { badge, copyable, csrfField, html, layout, postButton, when, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import { actionFieldOf } from '../action-fields';

/** A site's API trigger source, without its secret. */
export interface TriggerSourceView {
  created_at: Date;
  rotated_at: Date | null;
  previous_secret_expires_at: Date | null;
}

/** A webhook secret just made, shown this once. */
export interface ShownSecret {
  siteId: string;
  secret: string;
  /** After a rotation: until when the previous secret keeps verifying. */
  previousValidUntil: Date | null;
}

export interface FlowsPageData {
  flows: readonly FlowRecord[];
  sites: readonly SiteRecord[];
  destinations: readonly DestinationRecord[];
  triggerSources: ReadonlyMap<string, TriggerSourceView | null>;
  formIntegrations: readonly string[];
  webhookUrlOf(site: SiteRecord, key: string, type?: 'saas_signup' | 'conversion'): string;
  webhookBaseUrl: string;
  shownSecret?: ShownSecret | undefined;
  /** A failed create or publish: the message, and the form's values for a create. */
  error?: { flowId?: string; message: string; problems?: readonly { param: string; message: string }[]; values?: Record<string, string> } | undefined;
}

function triggerOf(flow: FlowRecord): { kind: 'api'; key: string; type: 'saas_signup' | 'conversion' } | { kind: 'form'; integration: string; pageFilter: string } {
  const t = flow.trigger_config as Record<string, unknown>;
  if (t.integrationId === 'api' || 'key' in t) return { kind: 'api', key: String(t.key ?? ''), type: t.type === 'conversion' ? 'conversion' : 'saas_signup' };
  return { kind: 'form', integration: String(t.integrationId ?? ''), pageFilter: String(t.pageFilter ?? 'all') };
}

function actionSummary(action: Record<string, unknown>): Html {
  const type = String(action.integrationId ?? '');
  const config = (action.config ?? {}) as Record<string, unknown>;
  const field = actionFieldOf(type);
  const value = field.read(config);
  return html`<li><strong>${field.platformLabel}</strong>${value ? html`: ${field.label.toLowerCase()} <code>${value}</code>` : ''}</li>`;
}

function clientSnippet(data: FlowsPageData, site: SiteRecord, key: string): string {
  return `import { createCnvClient } from 'cnv/client';

const cnv = createCnvClient({
  webhookBaseUrl: '${data.webhookBaseUrl}',
  siteKey: '${site.site_key}',
  triggerKey: '${key}',
  secret: process.env.CNV_WEBHOOK_SECRET, // the webhook secret, kept on the server
});

// In your signup handler, after the user is created:
await cnv.reportSignup({ request: req, customerEventId: user.id, email: user.email });`;
}

function secretSection(session: DashboardSession, data: FlowsPageData, site: SiteRecord): Html {
  const source = data.triggerSources.get(site.id) ?? null;
  const shown = data.shownSecret?.siteId === site.id ? data.shownSecret : undefined;
  const shownBlock = shown
    ? html`<div class="notice good" role="status"><strong>The new webhook secret of ${site.name}: copy it now.</strong> It is shown only this once.
${shown.previousValidUntil ? html` The previous secret keeps verifying until ${when(shown.previousValidUntil)}, so your backend can switch without losing a report.` : ''}</div>
${copyable(`secret-${site.id}`, shown.secret, 'secret')}`
    : '';
  if (!source) {
    return html`${shownBlock}<p>No webhook secret yet for ${site.name}: the API trigger's reports are signed with it.</p>
<div class="actions">${postButton(session, `/dashboard/sites/${site.id}/webhook-secret`, 'Create webhook secret')}</div>`;
  }
  const graceLeft = source.previous_secret_expires_at && source.previous_secret_expires_at.getTime() > Date.now();
  return html`${shownBlock}<p>Webhook secret of ${site.name}: set ${when(source.created_at)}${source.rotated_at ? html`, rotated ${when(source.rotated_at)}` : ''}.
${graceLeft ? html`The previous secret verifies until ${when(source.previous_secret_expires_at)}.` : ''}
<span class="hint">Secrets are never shown again; rotate to get a new one.</span></p>
<div class="actions"><form method="post" action="/dashboard/sites/${site.id}/webhook-secret" data-confirm="Rotate the webhook secret of ${site.name}? The old one keeps verifying for 24 hours.">${csrfField(session)}<button type="submit" class="secondary">Rotate secret</button></form></div>`;
}

function flowCard(session: DashboardSession, data: FlowsPageData, flow: FlowRecord): Html {
  const site = data.sites.find((s) => s.id === flow.site_id);
  const trigger = triggerOf(flow);
  const error = data.error?.flowId === flow.id ? data.error : undefined;
  return html`<section class="card" id="${flow.id}">
<h2>${flow.name} ${badge(flow.status)}</h2>
<p class="hint">${site?.name ?? flow.site_id} · id <code>${flow.id}</code> · created ${when(flow.created_at)}${flow.published_at ? html` · published ${when(flow.published_at)}` : ''}</p>
${error ? html`<div class="notice bad" role="alert">${error.message}${error.problems && error.problems.length > 1 ? html`<ul>${error.problems.map((p) => html`<li>${p.message}</li>`)}</ul>` : ''}</div>` : ''}
<dl class="facts">
<dt>Trigger</dt><dd>${
    trigger.kind === 'api'
      ? trigger.type === 'conversion'
        ? html`API trigger, later stage <code>${trigger.key}</code>`
        : html`API trigger, key <code>${trigger.key}</code>`
      : html`Form submission (${trigger.integration}), pages: <code>${trigger.pageFilter}</code>`
  }</dd>
<dt>Actions</dt><dd><ul style="margin:0;padding-left:18px">${flow.actions_config.map(actionSummary)}</ul></dd>
</dl>
<div class="actions">${
    flow.status === 'live'
      ? postButton(session, `/dashboard/flows/${flow.id}/unpublish`, 'Unpublish', 'secondary')
      : postButton(session, `/dashboard/flows/${flow.id}/publish`, 'Publish')
  }<a href="/dashboard/events?flow_id=${flow.id}">Events of this flow</a></div>
${
  trigger.kind === 'api' && site
    ? html`<h3>Webhook URL</h3>${copyable(`url-${flow.id}`, data.webhookUrlOf(site, trigger.key, trigger.type))}
<details><summary>Client snippet (Node, <code>cnv/client</code>)</summary>${copyable(`client-${flow.id}`, clientSnippet(data, site, trigger.key))}</details>
<h3>Webhook secret</h3>${secretSection(session, data, site)}`
    : ''
}
</section>`;
}

function createForm(session: DashboardSession, data: FlowsPageData): Html {
  const values = data.error && !data.error.flowId ? (data.error.values ?? {}) : {};
  const trigger = values.trigger_type ?? 'api';
  const connected = data.destinations.filter((d) => d.status === 'connected' || d.status === 'reauthorization_required');
  return html`<section class="card" id="new-flow">
<h2>Create a flow</h2>
${data.error && !data.error.flowId ? html`<div class="notice bad" role="alert">${data.error.message}</div>` : ''}
<form method="post" action="/dashboard/flows">
${csrfField(session)}
<div class="grid">
<div><label for="flow-site">Site</label><select id="flow-site" name="site_id">${data.sites.map(
    (s) => html`<option value="${s.id}"${values.site_id === s.id ? html` selected` : ''}>${s.name}</option>`,
  )}</select></div>
<div><label for="flow-name">Name</label><input type="text" id="flow-name" name="name" value="${values.name ?? ''}" placeholder="Signups"></div>
</div>
<fieldset class="choices"><legend>Trigger</legend>
<div class="choice">
<label class="option"><input type="radio" name="trigger_type" value="api"${trigger === 'api' ? html` checked` : ''}> API trigger</label>
<p class="hint">Your backend reports signups, or a later stage of a customer, through the signed webhook.</p>
<label for="flow-api-type">Reports</label>
<select id="flow-api-type" name="api_type"><option value="saas_signup">Signups</option><option value="conversion"${values.api_type === 'conversion' ? html` selected` : ''}>A later stage (trial, qualified lead, payment, renewal)</option></select>
<label for="flow-key">Trigger key</label>
<input type="text" id="flow-key" name="key" value="${values.key ?? ''}" placeholder="signup" aria-describedby="flow-key-hint">
<span class="hint" id="flow-key-hint">1 to 64 of A-Z a-z 0-9 _ -; the last part of the webhook URL.</span>
</div>
<div class="choice">
<label class="option"><input type="radio" name="trigger_type" value="form"${trigger === 'form' ? html` checked` : ''}> Form trigger</label>
<p class="hint">A form submission the loader sees in the browser.</p>
<div class="grid">
<div><label for="flow-integration">Form tool</label><select id="flow-integration" name="integration">${data.formIntegrations.map(
    (i) => html`<option value="${i}"${values.integration === i ? html` selected` : ''}>${i}</option>`,
  )}</select></div>
<div><label for="flow-pages">Pages</label><input type="text" id="flow-pages" name="page_filter" value="${values.page_filter ?? 'all'}" aria-describedby="flow-pages-hint">
<span class="hint" id="flow-pages-hint"><code>all</code>, or a path like <code>/signup</code> or <code>/pricing/*</code></span></div>
</div>
</div>
</fieldset>
<fieldset class="choices"><legend>Actions</legend>
${
  connected.length === 0
    ? html`<p class="muted">No destination connected: <a href="/dashboard/destinations">connect one</a> first.</p>`
    : connected.map((d) => {
        const field = actionFieldOf(d.type);
        return html`<div class="choice">
<label class="option"><input type="checkbox" name="action_${d.type}" value="on"${values[`action_${d.type}`] ? html` checked` : ''}> Send to ${d.label}</label>
<label for="flow-${d.type}">${field.label}</label>
<input type="text" id="flow-${d.type}" name="value_${d.type}" value="${values[`value_${d.type}`] ?? ''}" aria-describedby="flow-${d.type}-hint">
<span class="hint" id="flow-${d.type}-hint">${field.hint}</span></div>`;
      })
}
</fieldset>
<div class="actions"><button type="submit">Create draft</button><span class="hint">A draft delivers nothing until published.</span></div>
</form>
</section>`;
}

/** The Flows page. */
export function flowsPage(session: DashboardSession, data: FlowsPageData, notices: Notice[] = []): string {
  return layout(
    { title: 'Flows', nav: 'flows', session, notices },
    html`<h1>Flows</h1>
<p class="lead">A flow sends each conversion of its trigger to its destinations, once published.</p>
${data.flows.length === 0 ? html`<div class="card"><p class="muted">No flow yet.</p></div>` : ''}
${data.flows.map((flow) => flowCard(session, data, flow))}
${createForm(session, data)}`,
  );
}
