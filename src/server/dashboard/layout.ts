/** The dashboard's page shell: header with the account and sign-out, the navigation, notices, and the styles. */
import { Html, html, htmlDocument, raw } from '../http/html';
import { COPY_BUTTONS_SCRIPT, COPYABLE_STYLE } from '../http/copy-buttons';
import { FIELD_ERROR_STYLE } from '../http/field-error';
import { LIVE_SWAP_SCRIPT } from '../http/live-swap';
import type { DashboardSession } from './sessions';

export { Html, html, raw } from '../http/html';
export { copyable } from '../http/copy-buttons';
export { fieldAttributes, fieldError } from '../http/field-error';

/** The pages in the navigation, in order. */
export const NAV = [
  { id: 'overview', label: 'Overview', href: '/' },
  { id: 'sites', label: 'Sites', href: '/dashboard/sites' },
  { id: 'destinations', label: 'Destinations', href: '/dashboard/destinations' },
  { id: 'flows', label: 'Flows', href: '/dashboard/flows' },
  { id: 'events', label: 'Events', href: '/dashboard/events' },
  { id: 'notifications', label: 'Notifications', href: '/dashboard/notifications' },
  { id: 'keys', label: 'API keys', href: '/dashboard/keys' },
  { id: 'privacy', label: 'Personal data', href: '/dashboard/privacy' },
] as const;

export type NavId = (typeof NAV)[number]['id'];

/** Path of the progressive-enhancement script (copy buttons, confirmations, live sections); pages work without it. */
export const SCRIPT_PATH = '/dashboard/assets/dashboard.js';

/** The rules that show the tables `selector` matches as one block per row, each cell on its line after its column's name (data-label). */
function stacked(selector: string): string {
  return `  ${selector} thead { display: none; }
  ${selector} tr { display: block; border-bottom: 1px solid var(--line); padding: 6px 0; }
  ${selector} td { display: block; border: 0; padding: 2px 4px; }
  ${selector} td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .78rem; text-transform: uppercase; }
`;
}

const STYLE = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #dfe3ea; --field: #8a94a6; --soft: #f5f7fa; --accent: #2456d6;
  --bad: #b42318; --bad-bg: #fef3f2; --good: #067647; --good-bg: #ecfdf3; --warn: #93370d; --warn-bg: #fffaeb; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--soft); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #4a6fd8; outline-offset: 2px; }
.skip { position: absolute; left: 8px; top: -48px; background: #fff; padding: 8px 12px; border-radius: 6px; z-index: 10; }
.skip:focus { top: 8px; }
header.top { background: #fff; border-bottom: 1px solid var(--line); }
.top-inner { max-width: 1120px; margin: 0 auto; padding: 10px 20px; display: flex; flex-wrap: wrap; align-items: center; gap: 8px 20px; }
.brand { font-weight: 700; font-size: 1.1rem; color: var(--ink); text-decoration: none; margin-right: 4px; }
nav.main { display: flex; gap: 4px; flex-wrap: wrap; flex: 1; }
nav.main a { padding: 6px 10px; border-radius: 6px; text-decoration: none; color: var(--muted); font-weight: 500; }
nav.main a[aria-current=page] { background: #eef4ff; color: var(--accent); }
.who { display: flex; align-items: center; gap: 10px; color: var(--muted); font-size: .875rem; }
.who form { margin: 0; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 1.45rem; margin: 0 0 4px; }
h2 { font-size: 1.1rem; margin: 0 0 10px; }
h3 { font-size: .95rem; margin: 18px 0 6px; }
p.lead { color: var(--muted); margin: 0 0 20px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 18px 20px; margin: 0 0 18px; }
.card > :first-child { margin-top: 0; }
.card > :last-child { margin-bottom: 0; }
.muted, .hint { color: var(--muted); }
.hint { font-size: .85rem; }
.fields { display: grid; gap: 14px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px 16px; }
label { display: block; font-weight: 600; font-size: .9rem; }
label .hint { display: block; font-weight: 400; }
input[type=text], input[type=url], input[type=search], input[type=date], select {
  width: 100%; padding: 8px 10px; margin-top: 4px; font: inherit; font-weight: 400; border: 1px solid var(--field); border-radius: 7px; background: #fff;
  /* One height for every kind (a select drew 38 px, a text field 41, a date field 43, side by side in one row). */
  height: calc(1.5em + 18px); }
input[aria-invalid=true], select[aria-invalid=true] { border-color: var(--bad); }
${FIELD_ERROR_STYLE}button, a.button { display: inline-block; padding: 8px 14px; font: inherit; font-weight: 600; color: #fff; background: var(--accent);
  border: 1px solid var(--accent); border-radius: 7px; cursor: pointer; text-decoration: none; line-height: 1.3; }
button.secondary, a.button.secondary { background: #fff; color: var(--accent); }
button.danger, a.button.danger { background: #fff; color: var(--bad); border-color: #f4c7c2; }
button.danger-solid { background: var(--bad); border-color: var(--bad); }
button.small, a.button.small { padding: 4px 10px; font-size: .85rem; }
button:disabled { background: #e4e7ec; border-color: #e4e7ec; color: #475467; cursor: not-allowed; }
button.link { background: none; border: 0; color: var(--accent); padding: 0; font-weight: 500; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-top: 14px; }
.actions form { margin: 0; }
.notice { padding: 10px 14px; border-radius: 8px; background: #eef4ff; margin: 0 0 16px; overflow-wrap: anywhere; }
.notice.good { background: var(--good-bg); color: var(--good); }
.notice.bad { background: var(--bad-bg); color: var(--bad); }
.notice.warn { background: var(--warn-bg); color: var(--warn); }
code, pre, .mono { font: .82rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { background: #f1f3f7; padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
code.nowrap { white-space: nowrap; overflow-wrap: normal; }
pre { background: #f1f3f7; padding: 10px 12px; border-radius: 8px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
${COPYABLE_STYLE}.secret { border: 2px solid var(--good); background: var(--good-bg); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
/* A name or label of one long word (a key's label, a flow's name) wraps instead of widening the page; the other
   cells of its table keep their words whole. */
h1, h2, h3, summary, td.text { overflow-wrap: anywhere; }
td.text { min-width: 10rem; }
th { font-size: .78rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; }
tr:last-child td { border-bottom: 0; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .78rem; font-weight: 600; background: #eef0f4; color: var(--muted); white-space: nowrap; }
.badge.good { background: var(--good-bg); color: var(--good); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.info { background: #eef4ff; color: var(--accent); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; margin: 0; }
dl.facts dt { color: var(--muted); font-size: .875rem; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
ol.trace { list-style: none; padding: 0; margin: 0; counter-reset: step; }
ol.trace > li { position: relative; padding: 0 0 18px 36px; border-left: 2px solid var(--line); margin-left: 12px; }
ol.trace > li:last-child { border-left-color: transparent; }
ol.trace > li::before { counter-increment: step; content: counter(step); position: absolute; left: -13px; top: 0; width: 24px; height: 24px;
  border-radius: 50%; background: #fff; border: 2px solid var(--accent); color: var(--accent); font-size: .78rem; font-weight: 700; text-align: center; line-height: 20px; }
ol.trace > li > h3 { margin-top: 0; }
ol.trace dl.facts { grid-template-columns: 11rem minmax(0, 1fr); }
ol.trace .card dl.facts { grid-template-columns: 9.5rem minmax(0, 1fr); }
ul.platforms { list-style: none; margin: 0; padding: 0; }
ul.platforms li { display: flex; align-items: center; gap: 8px; margin: 2px 0; }
svg.logo { flex: none; vertical-align: middle; }
.brandline { display: flex; align-items: center; gap: 12px; }
.brandline h2 { margin: 0; }
.todo ol { margin: 8px 0 0; padding-left: 20px; }
.todo li { margin: 6px 0; }
.todo li form { display: inline-block; margin: 0 0 0 8px; }
.todo li a.button { margin-left: 8px; }
.backend + .backend { border-top: 1px solid var(--line); margin-top: 14px; }
.who-cell .hint { display: block; }
ol.checklist { list-style: none; padding: 0; margin: 0; counter-reset: setup; }
ol.checklist > li { display: grid; grid-template-columns: 32px 1fr auto; gap: 4px 14px; align-items: start; padding: 14px 0; border-top: 1px solid var(--line); }
ol.checklist > li:first-child { border-top: 0; padding-top: 4px; }
ol.checklist .mark { counter-increment: setup; width: 28px; height: 28px; border-radius: 50%; border: 2px solid #98a2b3; color: #475467; font-weight: 700; font-size: .85rem; display: flex; align-items: center; justify-content: center; }
ol.checklist .mark::before { content: counter(setup); }
ol.checklist li.done .mark { background: var(--good); border-color: var(--good); color: #fff; }
ol.checklist li.done .mark::before { content: "✓"; }
ol.checklist li.current .mark { border-color: var(--accent); color: var(--accent); }
ol.checklist h3 { margin: 2px 0 2px; font-size: 1rem; }
ol.checklist p { margin: 0; }
ol.checklist li.done h3 { color: var(--muted); }
ol.checklist .go { align-self: center; white-space: nowrap; }
.progress { height: 8px; background: #e4e7ec; border-radius: 999px; overflow: hidden; margin: 6px 0 16px; }
.progress > span { display: block; height: 100%; background: var(--good); }
.live-note { font-size: .8rem; color: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
ul.places { margin: 0; padding-left: 18px; }
ul.connect-list { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 10px; }
ul.connect-list button { white-space: nowrap; }
.test-form { margin: 14px 0 0; max-width: 460px; }
.test-form button { margin-top: 10px; }
ul.connect-list li { display: flex; flex-wrap: wrap; align-items: center; gap: 10px; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
ul.connect-list li span { flex: 1; min-width: 8rem; font-weight: 600; }
/* The button on a line of its own in every tile (it fitted beside a short name, Meta's, and wrapped under the others). */
ul.connect-list form { margin: 0; flex-basis: 100%; }
ul.places li { margin: 4px 0; }
.card.attention { border-left: 4px solid var(--warn); }
ul.attention-list { list-style: none; margin: 0; padding: 0; }
ul.attention-list li { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px 16px; padding: 10px 0; border-top: 1px solid var(--line); }
ul.attention-list li:first-child { border-top: 0; padding-top: 4px; }
ul.attention-list li span { flex: 1 1 20rem; }
.chart-frame { position: relative; container-type: inline-size; }
.chart-scroll { overflow-x: auto; }
.chart-axis { display: none; }
/* Said only where the plot (540 px at least) is wider than its frame, so that some days are out of view. */
.chart-scroll-hint { display: none; margin: 4px 0 0; font-size: .8rem; color: var(--muted); }
@container (max-width: 539px) { .chart-scroll-hint { display: block; } }
.chart-title { display: flex; align-items: center; justify-content: space-between; gap: 12px; flex-wrap: wrap; margin-bottom: 8px; }
.chart-title h2 { margin: 0; }
.segmented { display: inline-flex; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.segmented a { padding: 4px 12px; font-size: .9rem; text-decoration: none; color: var(--muted); }
.segmented a + a { border-left: 1px solid var(--line); }
.segmented a[aria-current] { background: var(--ink); color: #fff; font-weight: 600; }
.value-charts { display: grid; grid-template-columns: minmax(0, 1fr); gap: 14px; }
details.chart-table { margin-top: 8px; font-size: .9rem; }
details.chart-table table { margin-top: 6px; }
details.chart-table td { font-variant-numeric: tabular-nums; }
details.chart-table tbody th { text-transform: none; letter-spacing: 0; font-size: .9rem; color: var(--ink); font-variant-numeric: tabular-nums; }
details.chart-table tr:last-child th { border-bottom: 0; }
.chart-head { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; font-size: .95rem; margin-bottom: 2px; }
.chart svg.chart-plot { width: 100%; min-width: 540px; height: auto; display: block; }
.grid.filters { grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); }
.legend { display: flex; flex-wrap: wrap; gap: 14px; font-size: .85rem; color: var(--muted); margin-top: 6px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.pager { display: flex; justify-content: space-between; align-items: center; margin-top: 12px; }
details summary { cursor: pointer; color: var(--accent); font-weight: 500; }
.sign-in { max-width: 520px; margin: 10vh auto; }
.card .notice { margin: 12px 0; }
fieldset.choices { border: 0; padding: 0; margin: 18px 0 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 12px; }
fieldset.choices > .field-error, fieldset.choices > .notice { grid-column: 1 / -1; margin: 0; }
fieldset.choices > legend { font-weight: 700; font-size: .95rem; margin-bottom: 8px; padding: 0; }
.choice { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.choice > label:not(.option) { margin-top: 10px; }
.choice p.hint { margin: 2px 0 0; }
label.option { font-size: .95rem; display: flex; gap: 8px; align-items: center; }
td .badge + .hint, .covered { white-space: nowrap; }
fieldset.kinds { border: 0; padding: 0; margin: 16px 0 0; display: grid; gap: 10px; }
fieldset.kinds > legend { font-weight: 700; font-size: .95rem; margin-bottom: 8px; padding: 0; }
fieldset.kinds label.option { align-items: flex-start; font-weight: 400; margin: 0; }
fieldset.kinds label.option input { width: auto; margin: 3px 0 0; }
fieldset.kinds .hint { display: block; }
.url { font: .82rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
@media (min-width: 641px) { table.endpoints td:first-child { width: 45%; } table.notifications td:first-child { width: 50%; } }
.about { margin: 4px 0 2px; }
ol.attempts { margin: 0; padding-left: 1.3em; }
ol.attempts li { margin: 0 0 4px; }
ul.plain { list-style: none; margin: 0; padding: 0; }
/* An event's destinations: each platform's name beside its status, the statuses lined up in a column (a long name
   wraps between its words, never the status off its line). */
ul.dests { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: auto max-content; justify-content: start; gap: 2px 8px; }
ul.dests li { display: contents; }
ul.dests .badge { justify-self: start; align-self: start; margin-top: 2px; }
@media (max-width: 640px) {
  body { font-size: 14px; }
  main { padding: 16px 12px 40px; }
  .top-inner { padding: 8px 12px; }
  .card { padding: 14px; }
  nav.main { order: 3; flex-basis: 100%; flex-wrap: wrap; gap: 2px; margin: 0 -6px; }
  nav.main a { white-space: nowrap; padding: 6px 7px; }
  .chart-scroll { direction: rtl; }
  .chart-scroll svg { direction: ltr; }
  /* The axis' copy, at the plot's scale: 44 of the plot's 720 units, the plot being 540 px wide at least. */
  .chart-axis { display: block; position: absolute; left: 0; top: 0; width: max(33px, calc(100cqw * 44 / 720)); height: auto; pointer-events: none; }
  /* The plot is drawn at 540 of its 720 units, so its 11-unit labels were 8 px: 14 units make them 10.5 px, the axis' copy alike. */
  .chart svg text { font-size: 14px; }
  details.chart-table th, details.chart-table td { padding: 6px 5px; }
  details.chart-table tbody th { white-space: nowrap; }
  details.chart-table thead th { letter-spacing: 0; font-size: .7rem; }
  ol.trace dl.facts, ol.trace .card dl.facts { grid-template-columns: 1fr; }
  ol.checklist > li { grid-template-columns: 32px 1fr; }
  ol.checklist .go { grid-column: 2; justify-self: start; }
  dl.facts { grid-template-columns: 1fr; gap: 0 0; }
  dl.facts dd { margin-bottom: 8px; }
  ol.trace > li { padding-left: 22px; margin-left: 10px; }
  ol.trace .card { padding: 10px; }
${stacked('table.stack')}}
/* The events' table (eight columns) needs about 920 px: narrower, it is stacked too, not scrolled sideways. */
@media (max-width: 1000px) {
${stacked('table.stack.wide')}}
@media (min-width: 1180px) { ul.dests > li > span { white-space: nowrap; } }
`;

/** A notice at the top of a page. */
export interface Notice {
  kind: 'good' | 'bad' | 'warn' | 'info';
  text: Html | string;
  /** `status` (the default): the outcome of what was just done; `note`: standing information about the page. */
  role?: 'status' | 'note';
}

export interface LayoutOptions {
  title: string;
  nav: NavId | null;
  session: DashboardSession | null;
  notices?: readonly Notice[];
}

/**
 * A refused form's message, above the form: a link to the field it names (which says it again under itself, see
 * fieldError), or the message alone when it names none. Focusable (tabindex -1): a form that posts to an address
 * whose fragment is this id opens at it, focused, with no script (Chrome focuses a focusable fragment target, and
 * clears the focus when the target is not focusable); the page's script focuses it too (ERROR_SUMMARY).
 */
export function formErrorSummary(id: string, message: string, controlId?: string): Html {
  return html`<div class="notice bad" role="alert" id="${id}" ${raw(ERROR_SUMMARY)} tabindex="-1">${controlId ? html`<a href="#${controlId}">${message}</a>` : message}</div>`;
}

/** A refused form: its message, the field it names, and, when several fields are wrong, each one's. */
export interface FormRefusal {
  message: string;
  param?: string;
  problems?: ReadonlyArray<{ param: string; message: string }>;
}

/**
 * What a refused form says of one of its fields, or null when that field is fine. `fieldOf` names the form's field of
 * a refused parameter when the two differ (the API's `trigger_config.key` is the form's `key`).
 */
export function problemOf(refusal: FormRefusal | undefined, field: string, fieldOf: (param: string) => string = (param) => param): string | null {
  if (!refusal) return null;
  const problems = refusal.problems ?? (refusal.param ? [{ param: refusal.param, message: refusal.message }] : []);
  return problems.find((p) => fieldOf(p.param) === field)?.message ?? null;
}

/** The message above a refused form: one linking to its field, or, for several wrong fields, a list linking to each. */
export function refusalSummary(id: string, refusal: FormRefusal, controlIdOf: (param: string) => string | undefined): Html {
  const problems = refusal.problems ?? [];
  if (problems.length < 2) {
    const control = refusal.param ? controlIdOf(refusal.param) : undefined;
    return formErrorSummary(id, refusal.message, control);
  }
  const item = (p: { param: string; message: string }) => {
    const control = controlIdOf(p.param);
    return html`<li>${control ? html`<a href="#${control}">${p.message}</a>` : p.message}</li>`;
  };
  return html`<div class="notice bad" role="alert" id="${id}" ${raw(ERROR_SUMMARY)} tabindex="-1">${problems.length} fields need a change:<ul>${problems.map(item)}</ul></div>`;
}

/** The attribute of the message of a refused form that the page's script focuses once the page has loaded. */
export const ERROR_SUMMARY = 'data-error-summary';

/** A hidden input carrying the session's CSRF token: every form of a signed-in page has one. */
export function csrfField(session: DashboardSession): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
}

/** A form posting to `action` with the CSRF token and one button. */
export function postButton(session: DashboardSession, action: string, label: string, className = '', extra: Html | string = ''): Html {
  return html`<form method="post" action="${action}">${csrfField(session)}${extra}<button type="submit"${className ? html` class="${className}"` : ''}>${label}</button></form>`;
}

/** A status badge with the colour its meaning calls for. */
export function badge(status: string | null | undefined): Html {
  if (!status) return html`<span class="badge">none</span>`;
  const kind = ['delivered', 'completed', 'connected', 'live', 'high', 'served'].includes(status)
    ? 'good'
    : ['failed', 'reauthorization_required', 'refused', 'revoked', 'low'].includes(status)
      ? 'bad'
      : ['queued', 'pending', 'draft', 'medium', 'retrying'].includes(status)
        ? 'warn'
        : 'info';
  return html`<span class="badge ${kind}">${status.replace(/_/g, ' ')}</span>`;
}

/** A timestamp as people read it (UTC, to the second), in a <time> element. */
export function when(value: string | Date | null | undefined): Html {
  if (!value) return html`<span class="muted">never</span>`;
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) return html`${String(value)}`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;
}

/** A complete dashboard page. */
export function layout(options: LayoutOptions, body: Html): string {
  const { session } = options;
  const header = session
    ? html`<a class="skip" href="#main">Skip to content</a><header class="top"><div class="top-inner">
<a class="brand" href="/">cnv</a>
<nav class="main" aria-label="Dashboard">${NAV.map(
        (item) => html`<a href="${item.href}"${item.id === options.nav ? raw(' aria-current="page"') : ''}>${item.label}</a>`,
      )}</nav>
<div class="who"><span>${session.accountName}</span>${postButton(session, '/dashboard/sign-out', 'Sign out', 'link')}</div>
</div></header>`
    : html`<header class="top"><div class="top-inner"><span class="brand">cnv</span></div></header>`;
  const notices = (options.notices ?? []).map((n) => html`<div class="notice ${n.kind}" role="${n.role ?? 'status'}">${n.text}</div>`);
  return htmlDocument({
    title: `${options.title} · cnv`,
    style: STYLE,
    head: html`<script src="${SCRIPT_PATH}" defer></script>
`,
    body: html`${header}
<main id="main" tabindex="-1">
${notices}
${body}
</main>`,
  });
}

/**
 * The progressive enhancement: copy buttons, a confirmation before destructive posts, the focus on a refused form's
 * message, and live sections. A live section (`data-live="/path"`) is fetched again every few seconds
 * (`data-live-every`, default 3) and replaced when it changed (the focus kept on the same control, its
 * `data-live-summary` lines said in a status region: LIVE_SWAP_SCRIPT), until the fresh copy says it is done
 * (`data-live-done`), the tab is closed, or half an hour has passed; the pages are complete without it (a reload shows
 * the same).
 */
export const SCRIPT = `
${COPY_BUTTONS_SCRIPT}${LIVE_SWAP_SCRIPT}document.addEventListener('submit', function (event) {
  var form = event.target;
  if (form.hasAttribute && form.hasAttribute('data-confirm') && !window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
});
// A refused form: its message takes the focus, so it is in view and a screen reader reads it first.
var refusal = document.querySelector('[${ERROR_SUMMARY}]');
if (refusal) refusal.focus();
document.querySelectorAll('[data-live]').forEach(function (section) {
  var url = section.getAttribute('data-live');
  var every = Math.max(1, Number(section.getAttribute('data-live-every')) || 3) * 1000;
  var until = Date.now() + 30 * 60 * 1000;
  var last = null;
  cnvAnnounceSummary(section);
  function tick() {
    if (Date.now() > until || section.hasAttribute('data-live-done')) return;
    // Hidden tab, or someone typing in the section (a test's conversion id): look again later, never under their hands.
    var typing = document.activeElement && section.contains(document.activeElement) && /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement.tagName);
    if (document.hidden || typing) { setTimeout(tick, every); return; }
    fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } }).then(function (response) {
      return response.ok ? response.text() : null;
    }).then(function (text) {
      if (text !== null && text !== last) {
        last = text;
        var fresh = document.createElement('div');
        fresh.innerHTML = text;
        var next = fresh.firstElementChild;
        if (next && cnvSwapKeepingFocus(section, next.innerHTML)) {
          cnvShowCopyButtons(section);
          cnvAnnounceSummary(section);
        }
        if (next && next.hasAttribute('data-live-done')) section.setAttribute('data-live-done', '');
      }
    }, function () {}).then(function () { setTimeout(tick, every); });
  }
  setTimeout(tick, every);
});
`;
