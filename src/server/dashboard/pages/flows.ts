/**
 * The Flows page: each flow with its trigger and destinations, and for a draft what still keeps it from going live
 * (each with the button that fixes it; "Publish" is enabled only when publishing will succeed); for an API trigger the
 * webhook URL and a client snippet; the form that creates a flow; and each site's backend connection (the webhook
 * secret: created, shown once, rotated, and the old one revoked at once after a leak).
 */
import { overlapMessage, type FlowOverlap, type FlowRecord } from '../../api/flows';
import type { SiteRecord } from '../../api/sites';
import type { DestinationRecord } from '../../api/destinations';
import { platformLogo } from '../../destinations';
import { badge, copyable, csrfField, ERROR_SUMMARY, fieldAttributes, fieldError, formErrorSummary, html, layout, postButton, problemOf, raw, refusalSummary, when, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import { actionFieldOf } from '../action-fields';
import { formToolLabel } from '../labels';
import { triggerOf } from '../flow-trigger';

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

/** One thing that keeps a draft from publishing, in words, with the fix: a link, or a form posting to the dashboard. */
export interface FlowProblem {
  text: string;
  fix?: { href: string; label: string } | { post: string; label: string; fields?: Record<string, string> };
}

export interface FlowsPageData {
  flows: readonly FlowRecord[];
  sites: readonly SiteRecord[];
  destinations: readonly DestinationRecord[];
  triggerSources: ReadonlyMap<string, TriggerSourceView | null>;
  /** For each draft, what keeps it from publishing now (empty: it can go live). */
  publishProblems: ReadonlyMap<string, readonly FlowProblem[]>;
  /** For each flow, the live flows that send its conversions where a platform counts each one (absent: none). */
  overlaps?: ReadonlyMap<string, readonly FlowOverlap[]>;
  /** Whether the account has more flows, or more sites, than the page shows (DASHBOARD_PAGE_SIZE of each). */
  more?: { flows: boolean; sites: boolean };
  formIntegrations: readonly string[];
  webhookUrlOf(site: SiteRecord, key: string, type: 'saas_signup' | 'conversion'): string;
  webhookBaseUrl: string;
  shownSecret?: ShownSecret | undefined;
  /** A failed create or publish: the message, and the form's values for a create. */
  error?: { flowId?: string; message: string; param?: string; problems?: readonly { param: string; message: string }[]; values?: Record<string, string> } | undefined;
  /** The time the page is rendered at (grace periods are compared with it). */
  now?: Date;
}

function actionSummary(action: Record<string, unknown>): Html {
  const type = String(action.integrationId ?? '');
  const config = (action.config ?? {}) as Record<string, unknown>;
  const field = actionFieldOf(type);
  const value = field.read(config);
  return html`<li>${platformLogo(type, field.platformLabel, 18)}<span><strong>${field.platformLabel}</strong>${value ? html` · ${field.label.toLowerCase()} <code>${value}</code>` : ''}</span></li>`;
}

function clientSnippet(data: FlowsPageData, site: SiteRecord, trigger: { key: string; type: 'saas_signup' | 'conversion' }): string {
  const client = (triggerKey: string) => `import { createCnvClient } from 'cnv/client';

const cnv = createCnvClient({
  webhookBaseUrl: '${data.webhookBaseUrl}',
  siteKey: '${site.site_key}',
  triggerKey: ${triggerKey},
  secret: process.env.CNV_WEBHOOK_SECRET, // the webhook secret, kept on the server
});
`;
  if (trigger.type === 'conversion') {
    // The client's triggerKey is the signup's: the key of this site's signup flow (a live one first), when it has one.
    const signups = data.flows.filter((f) => f.site_id === site.id && f.trigger_config.type === 'saas_signup' && typeof f.trigger_config.key === 'string');
    const signup = signups.find((f) => f.status === 'live') ?? signups[0];
    const signupKey = signup ? `'${String(signup.trigger_config.key)}', // the key of your signup flow's trigger` : `'…', // the key of your signup flow's trigger (this site has none yet)`;
    return `${client(signupKey)}
// When a customer reaches this stage (a payment, a renewal…), with the customerId you sent with their signup:
await cnv.reportConversion('${trigger.key}', { customerEventId: invoice.id, customerId: customer.id, value: 29, currency: 'EUR' });`;
  }
  return `${client(`'${trigger.key}'`)}
// In your signup handler, after the user is created:
await cnv.reportSignup({ request: req, customerEventId: user.id, email: user.email });`;
}

function fixControl(session: DashboardSession, fix: NonNullable<FlowProblem['fix']>): Html {
  if ('href' in fix) return html`<a class="button small" href="${fix.href}">${fix.label}</a>`;
  const hidden = Object.entries(fix.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return postButton(session, fix.post, fix.label, 'small', html`${hidden}`);
}

/** A draft's way to going live: the missing steps with their fixes and a disabled Publish, or Publish. */
function publishBlock(session: DashboardSession, data: FlowsPageData, flow: FlowRecord): Html {
  const problems = data.publishProblems.get(flow.id) ?? [];
  const failed = data.error?.flowId === flow.id;
  if (problems.length === 0) {
    return html`${failed ? formErrorSummary(`todo-${flow.id}`, data.error!.message) : ''}
<div class="actions">${postButton(session, `/dashboard/flows/${flow.id}/publish#todo-${flow.id}`, 'Publish')}<span class="hint">Ready: publishing starts delivery at once.</span>
<a href="/dashboard/events?flow_id=${flow.id}">Events of this flow</a></div>`;
  }
  return html`<div class="notice warn todo" id="todo-${flow.id}"${failed ? html` role="alert" ${raw(ERROR_SUMMARY)} tabindex="-1"` : ''}>
<strong>${failed ? 'This flow could not go live yet.' : 'Before this flow can go live:'}</strong>
<ol>${problems.map((p) => html`<li><span>${p.text}</span>${p.fix ? fixControl(session, p.fix) : ''}</li>`)}</ol>
</div>
<div class="actions"><button type="button" disabled aria-describedby="todo-${flow.id}">Publish</button><span class="hint">Enabled once the step${problems.length === 1 ? '' : 's'} above ${problems.length === 1 ? 'is' : 'are'} done.</span></div>`;
}

/** A warning on a flow's card for each of its platforms whose connection waits for a new authorization. */
function waitingDestinations(data: FlowsPageData, flow: FlowRecord): Html | string {
  const types = new Set(flow.actions_config.map((action) => String(action.integrationId ?? '')));
  const waiting = data.destinations.filter((d) => d.status === 'reauthorization_required' && types.has(d.type));
  if (waiting.length === 0) return '';
  const names = waiting.map((d) => d.label).join(' and ');
  return html`<div class="notice warn" role="status">${names} refused cnv's authorization: ${flow.status === 'live' ? "this flow's" : "once published, this flow's"} conversions for ${waiting.length === 1 ? 'it' : 'them'} wait (nothing is lost) until you <a href="/dashboard/destinations">reconnect ${waiting.length === 1 ? 'it' : 'them'} on Destinations</a>.</div>`;
}

/** A warning on a flow's card for each place where it and other live flows send the same conversions, counted twice there. */
function doubleCounted(data: FlowsPageData, flow: FlowRecord): Html | string {
  const places = new Map<string, FlowOverlap[]>();
  for (const overlap of data.overlaps?.get(flow.id) ?? []) {
    const key = `${overlap.integrationId} ${overlap.target}`;
    places.set(key, [...(places.get(key) ?? []), overlap]);
  }
  return html`${[...places.values()].map(
    (overlaps) => html`<div class="notice warn" role="status"><strong>Counted twice in ${overlaps[0]!.platformLabel}.</strong> ${overlapMessage(overlaps, flow.status === 'live', 'by name')} ${overlaps.map(
      (o, i) => html`${i > 0 ? ' · ' : ''}<a href="#${o.flowId}">Go to ${o.flowName}</a>`,
    )}</div>`,
  )}`;
}

function flowCard(session: DashboardSession, data: FlowsPageData, flow: FlowRecord): Html {
  const site = data.sites.find((s) => s.id === flow.site_id);
  const trigger = triggerOf(flow);
  return html`<section class="card" id="${flow.id}" aria-labelledby="title-${flow.id}">
<h2 id="title-${flow.id}">${flow.name} ${badge(flow.status)}</h2>
<p class="hint">${site?.name ?? flow.site_id} · created ${when(flow.created_at)}${flow.published_at ? html` · published ${when(flow.published_at)}` : ''} · id <code>${flow.id}</code></p>
<dl class="facts">
<dt>Trigger</dt><dd>${
    trigger.kind === 'api'
      ? trigger.type === 'conversion'
        ? html`A later stage of a customer your backend reports (API trigger, key <code>${trigger.key}</code>)`
        : html`Signups your backend reports (API trigger, key <code>${trigger.key}</code>)`
      : html`Successful ${formToolLabel(trigger.integration)} submissions on ${trigger.pageFilter === 'all' ? 'every page' : html`pages <code>${trigger.pageFilter}</code>`}`
  }</dd>
<dt>Sends to</dt><dd><ul class="platforms">${flow.actions_config.map(actionSummary)}</ul></dd>
</dl>
${waitingDestinations(data, flow)}
${doubleCounted(data, flow)}
${
  flow.status === 'live'
    ? html`<div class="actions">${postButton(session, `/dashboard/flows/${flow.id}/unpublish`, 'Unpublish', 'secondary')}<a href="/dashboard/events?flow_id=${flow.id}">Events of this flow</a></div>`
    : publishBlock(session, data, flow)
}
${
  trigger.kind === 'api' && site
    ? html`<h3>Webhook URL</h3>${copyable(`url-${flow.id}`, data.webhookUrlOf(site, trigger.key, trigger.type))}
<details><summary>Client snippet (Node, <code>cnv/client</code>)</summary>${copyable(`client-${flow.id}`, clientSnippet(data, site, trigger))}</details>
<p class="hint">Signed with the webhook secret of ${site.name}: <a href="#backend-${site.id}">Your backend</a>.</p>`
    : ''
}
</section>`;
}

/** The secret just made, at the top of the page so it cannot be missed. */
function shownSecretCard(data: FlowsPageData): Html | string {
  const shown = data.shownSecret;
  if (!shown) return '';
  const site = data.sites.find((s) => s.id === shown.siteId);
  return html`<section class="card secret" aria-labelledby="shown-secret-title">
<h2 id="shown-secret-title">The new webhook secret of ${site?.name ?? shown.siteId}</h2>
<div class="notice good" role="status"><strong>Copy it now:</strong> it is shown only this once. Keep it on your server (for example in <code>CNV_WEBHOOK_SECRET</code>).
${shown.previousValidUntil ? html` The previous secret keeps verifying until ${when(shown.previousValidUntil)}, so your backend can switch without losing a report; if the old one leaked, revoke it now below.` : ''}</div>
${copyable(`secret-${shown.siteId}`, shown.secret)}
</section>`;
}

function backendOf(session: DashboardSession, data: FlowsPageData, site: SiteRecord): Html {
  const source = data.triggerSources.get(site.id) ?? null;
  const now = data.now ?? new Date();
  if (!source) {
    return html`<div class="backend" id="backend-${site.id}"><h3>${site.name} ${badge('not_connected')}</h3>
<p>No webhook secret yet: your server signs each signup report with it.</p>
<div class="actions">${postButton(session, `/dashboard/sites/${site.id}/webhook-secret`, 'Create webhook secret')}</div></div>`;
  }
  const graceLeft = source.previous_secret_expires_at !== null && source.previous_secret_expires_at.getTime() > now.getTime();
  return html`<div class="backend" id="backend-${site.id}"><h3>${site.name} ${badge('connected')}</h3>
<p>Webhook secret set ${when(source.created_at)}${source.rotated_at ? html`, rotated ${when(source.rotated_at)}` : ''}. <span class="hint">Secrets are shown once; rotate to get a new one.</span></p>
${graceLeft ? html`<div class="notice warn">The previous secret still verifies until ${when(source.previous_secret_expires_at)}. If it leaked, revoke it now.</div>` : ''}
<div class="actions"><form method="post" action="/dashboard/sites/${site.id}/webhook-secret" data-confirm="Rotate the webhook secret of ${site.name}? The old one keeps verifying for 24 hours, unless you revoke it.">${csrfField(session)}<button type="submit" class="secondary">Rotate secret</button></form>
${graceLeft ? html`<a class="button danger" href="/dashboard/sites/${site.id}/webhook-secret/revoke-previous">Revoke the old secret now</a>` : ''}</div></div>`;
}

function backendSection(session: DashboardSession, data: FlowsPageData): Html {
  return html`<section class="card" id="backend" aria-labelledby="backend-title">
<h2 id="backend-title">Your backend</h2>
<p class="hint">Flows with an API trigger receive the signups your server reports through a signed webhook (<code>${data.webhookBaseUrl}</code>). Each site has one webhook secret.</p>
${data.sites.map((site) => backendOf(session, data, site))}
</section>`;
}

/** The create form's input of each API parameter a refusal may name. */
const FLOW_FORM_FIELDS: Readonly<Record<string, string>> = {
  name: 'name', 'trigger_config.key': 'key', 'trigger_config.pageFilter': 'page_filter', page_filter: 'page_filter',
};

/** The id of the create form's control (or group) of each of its fields a refusal may name. */
function flowControlId(field: string): string | undefined {
  const fixed: Record<string, string> = { name: 'flow-name', key: 'flow-key', page_filter: 'flow-pages', actions_config: 'flow-actions' };
  if (fixed[field]) return fixed[field];
  return field.startsWith('value_') ? `flow-${field.slice('value_'.length)}` : undefined;
}

function createForm(session: DashboardSession, data: FlowsPageData): Html {
  const submitted = data.error && !data.error.flowId ? data.error.values : undefined;
  const values = submitted ?? {};
  const trigger = values.trigger_type ?? 'api';
  const connected = data.destinations.filter((d) => d.status === 'connected' || d.status === 'reauthorization_required');
  // The only connected platform is ticked for a new form (a form sent back keeps what was sent).
  const ticked = (type: string) => (submitted ? Boolean(values[`action_${type}`]) : connected.length === 1);
  // The field a refusal names (the API's parameter, or the form's own value_<type>), marked for the eye and the reader.
  const error = data.error && !data.error.flowId ? data.error : undefined;
  // Every field a refusal names (one, or each of several), in the form's names.
  const formField = (param: string) => FLOW_FORM_FIELDS[param] ?? param;
  const refusedMessage = (name: string) => problemOf(error, name, formField);
  const isRefused = (name: string) => refusedMessage(name) !== null;
  // A control's aria-describedby (its hint, then the message under it when the refusal names it) and aria-invalid.
  const marks = (name: string, notes: readonly string[] = []) => fieldAttributes(flowControlId(name)!, notes, isRefused(name));
  const message = (name: string) => fieldError(flowControlId(name)!, refusedMessage(name));
  return html`<section class="card" id="new-flow" aria-labelledby="new-flow-title">
<h2 id="new-flow-title">Create a flow</h2>
${error ? refusalSummary('new-flow-error', error, (param) => flowControlId(formField(param))) : ''}
<form method="post" action="/dashboard/flows#new-flow-error">
${csrfField(session)}
<div class="grid">
<div><label for="flow-site">Site</label><select id="flow-site" name="site_id">${data.sites.map(
    (s) => html`<option value="${s.id}"${values.site_id === s.id ? html` selected` : ''}>${s.name}</option>`,
  )}</select></div>
<div><label for="flow-name">Name</label><input type="text" id="flow-name" name="name" value="${values.name ?? ''}" placeholder="Signups"${marks('name')}>${message('name')}</div>
</div>
<fieldset class="choices"><legend>Trigger: what counts as a conversion</legend>
<div class="choice">
<label class="option"><input type="radio" name="trigger_type" value="api"${trigger === 'api' ? html` checked` : ''}> From your backend (API trigger)</label>
<p class="hint">Your server reports each signup (with the visitor's correlation cookie), or a later stage of a customer, through the signed webhook.</p>
<label for="flow-api-type">Reports</label>
<select id="flow-api-type" name="api_type"><option value="saas_signup">Signups</option><option value="conversion"${values.api_type === 'conversion' ? html` selected` : ''}>A later stage (trial, qualified lead, payment, renewal)</option></select>
<label for="flow-key">Trigger key</label>
<input type="text" id="flow-key" name="key" value="${values.key ?? ''}" placeholder="signup"${marks('key', ['flow-key-hint'])}>
<span class="hint" id="flow-key-hint">1 to 64 of A-Z a-z 0-9 _ -; the last part of the webhook URL.</span>${message('key')}
</div>
<div class="choice">
<label class="option"><input type="radio" name="trigger_type" value="form"${trigger === 'form' ? html` checked` : ''}> A form on your site (form trigger)</label>
<p class="hint">The snippet sees a successful submission in the browser: no backend needed.</p>
<div class="grid">
<div><label for="flow-integration">Form tool</label><select id="flow-integration" name="integration">${data.formIntegrations.map(
    (i) => html`<option value="${i}"${values.integration === i ? html` selected` : ''}>${formToolLabel(i)}</option>`,
  )}</select></div>
<div><label for="flow-pages">Pages</label><input type="text" id="flow-pages" name="page_filter" value="${values.page_filter ?? 'all'}"${marks('page_filter', ['flow-pages-hint'])}>
<span class="hint" id="flow-pages-hint"><code>all</code>, or a path like <code>/signup</code> or <code>/pricing/*</code></span>${message('page_filter')}</div>
</div>
</div>
</fieldset>
<fieldset class="choices" id="flow-actions"${isRefused('actions_config') ? html` aria-describedby="flow-actions-error"` : ''}><legend>Send to</legend>
${message('actions_config')}
${
  connected.length === 0
    ? html`<p class="notice warn">No ad platform is connected yet: <a href="/dashboard/destinations">connect one</a> first, then come back to create the flow.</p>`
    : connected.map((d) => {
        const field = actionFieldOf(d.type);
        return html`<div class="choice">
<label class="option">${html`<input type="checkbox" name="action_${d.type}" value="on"${ticked(d.type) ? html` checked` : ''}${isRefused('actions_config') ? html` aria-invalid="true"` : ''}>`} ${platformLogo(d.type, d.label, 20)} Send to ${d.label}</label>
<label for="flow-${d.type}">${field.label}</label>
<input type="text" id="flow-${d.type}" name="value_${d.type}" value="${values[`value_${d.type}`] ?? ''}"${marks(`value_${d.type}`, [`flow-${d.type}-hint`])}>
<span class="hint" id="flow-${d.type}-hint">${field.hint}</span>${message(`value_${d.type}`)}</div>`;
      })
}
</fieldset>
<div class="actions">${
  connected.length === 0
    ? html`<button type="submit" disabled>Create draft</button><span class="hint">Connect an ad platform first: a flow needs somewhere to send.</span>`
    : html`<button type="submit">Create draft</button><span class="hint">A draft delivers nothing until published; the flow's card then lists anything still missing.</span>`
}</div>
</form>
</section>`;
}

/** Says so when the account has more flows or sites than this page lists: the rest are reached through the API. */
function moreThanShown(data: FlowsPageData): Html | string {
  const { flows = false, sites = false } = data.more ?? {};
  if (!flows && !sites) return '';
  const what = flows && sites ? `the first ${data.flows.length} flows and the first sites` : flows ? `the first ${data.flows.length} flows` : 'the first sites (and those of the flows shown)';
  const otherFlows = html` Manage the other flows through the REST API (<code>GET /v1/flows</code>, <code>POST /v1/flows</code>) or the agent tools (<code>list_flows</code>, <code>create_flow</code>).`;
  const otherSites = html` The <a href="/dashboard/sites">Sites page</a> lists every site; the webhook secret of one not listed here comes with a <code>connect_trigger_source</code> handoff for its <code>site_id</code> (<code>POST /v1/handoffs</code>, or the agent tool of that name).`;
  return html`<div class="notice warn" role="status">This account has more ${flows && sites ? 'flows and sites' : flows ? 'flows' : 'sites'} than this page shows: it lists ${what}, in the order they were made.${flows ? otherFlows : ''}${sites ? otherSites : ''}</div>`;
}

/** The Flows page. */
export function flowsPage(session: DashboardSession, data: FlowsPageData, notices: Notice[] = []): string {
  return layout(
    { title: 'Flows', nav: 'flows', session, notices },
    html`<h1>Flows</h1>
<p class="lead">A flow sends each conversion of its trigger to its ad platforms, once published.</p>
${shownSecretCard(data)}
${data.flows.length === 0 ? html`<div class="card"><p class="muted">No flow yet: create one below.</p></div>` : ''}
${moreThanShown(data)}
${data.flows.map((flow) => flowCard(session, data, flow))}
${createForm(session, data)}
${backendSection(session, data)}`,
  );
}

/** The confirmation before the previous webhook secret of a site stops verifying. */
export function revokeSecretPage(session: DashboardSession, site: SiteRecord, source: TriggerSourceView | null, now = new Date()): string {
  const graceLeft = source?.previous_secret_expires_at && source.previous_secret_expires_at.getTime() > now.getTime();
  return layout(
    { title: 'Revoke the old webhook secret', nav: 'flows', session },
    html`<p><a href="/dashboard/flows#backend-${site.id}">← Flows</a></p>
<section class="card" aria-labelledby="revoke-title"><h1 id="revoke-title">Revoke the old webhook secret of ${site.name}?</h1>
${
  graceLeft
    ? html`<p>The previous secret would keep verifying until ${when(source!.previous_secret_expires_at)}. Revoking it ends that <strong>now</strong>: from this moment, reports signed with it are refused (401).</p>
<div class="notice warn">Make sure your backend already signs with the new secret, or its reports are refused until it does.</div>
<div class="actions">${postButton(session, `/dashboard/sites/${site.id}/webhook-secret/revoke-previous`, 'Yes, revoke the old secret now', 'danger-solid')}<a href="/dashboard/flows#backend-${site.id}">Cancel</a></div>`
    : html`<div class="notice good" role="status">There is no previous secret still verifying: only the current secret works.</div>`
}
</section>`,
  );
}
