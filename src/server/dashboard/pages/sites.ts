/** The Sites page: each site's settings form, install snippet (and tag-manager variant), and install check. */
import { installSnippet } from '../../../protocol/install';
import { SITE_NAME_MAX, type SiteRecord } from '../../api/sites';
import { badge, copyable, csrfField, fieldAttributes, fieldError, html, layout, problemOf, refusalSummary, when, type FormRefusal, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import { loaderSeen, type InstallCheck } from '../install-check';
import { withoutControlCharacters } from '../../http/input';

export interface SiteView {
  site: SiteRecord;
  check: InstallCheck;
  /** A failed save of this site: the message and the values sent, shown in the form. */
  error?: FormRefusal & { values: Record<string, string> };
}

/** The tag-manager variant: the same loader URL, the script element created from a script. */
export function tagManagerSnippetOf(publicUrl: string, siteKey: string): string {
  return `<script>
(function (d) {
  var s = d.createElement('script');
  s.async = true;
  s.src = '${publicUrl}/loader.js?site_key=${encodeURIComponent(siteKey)}';
  d.head.appendChild(s);
})(document);
</script>`;
}

const SITE_FIELDS = ['name', 'domain', 'timezone'] as const;

function field(view: SiteView, name: (typeof SITE_FIELDS)[number], label: string, givenHint: string, stored: string): Html {
  const sent = view.error?.values[name];
  // A value stored before names refused control characters would make every Save of the form fail on them, invisibly:
  // the form shows it without them, says so, and a Save stores it so.
  const value = withoutControlCharacters(stored);
  const hint = value === stored || sent !== undefined
    ? givenHint
    : `${givenHint ? `${givenHint} ` : ''}The stored ${label.toLowerCase()} held invisible control characters (line breaks, tabs, escape codes): they are left out here, and Save stores it without them.`;
  const problem = problemOf(view.error, name);
  const invalid = problem !== null;
  const id = `${view.site.id}-${name}`;
  return html`<div><label for="${id}">${label}</label>
<input type="text" id="${id}" name="${name}" value="${sent ?? value}"${fieldAttributes(id, hint ? [`${id}-hint`] : [], invalid)}${name === 'domain' ? html` placeholder="https://www.example.com"` : ''}${name === 'name' ? html` maxlength="${SITE_NAME_MAX}"` : ''}>
${hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : ''}${fieldError(id, problem)}</div>`;
}

/** The settings form's message above it, linking to the field it names. */
function siteErrorSummary(view: SiteView): Html | string {
  const error = view.error;
  if (!error) return '';
  return refusalSummary(`${view.site.id}-error`, error, (param) => (SITE_FIELDS.some((name) => name === param) ? `${view.site.id}-${param}` : undefined));
}

/** Path of a site's live install check fragment. */
export function installCheckPath(siteId: string): string {
  return `/dashboard/sites/${siteId}/install-check`;
}

/**
 * The install check of a site: what the collector saw per page origin, and refusals. The same markup is the page's
 * section and its live fragment, refreshed every few seconds until the first page view arrives.
 */
export function installCheckSection(view: SiteView): Html {
  const { check, site } = view;
  const seen = loaderSeen(check);
  const origins =
    check.origins.length === 0
      ? html`<p class="notice info waiting" data-live-summary>Waiting for the first page view${site.domain ? '' : ' (no page can send anything until the domain is set)'}: open a page of your site that has the snippet. This check updates by itself.</p>`
      : html`${seen ? html`<p class="notice good" data-live-summary>The snippet works: page views arrive from your site.</p>` : ''}<div class="table-wrap"><table class="stack"><caption class="visually-hidden">Page origins seen</caption><thead><tr><th scope="col">Page origin</th><th scope="col">Covered</th><th scope="col">Last config request</th><th scope="col">Last snapshot</th><th scope="col" title="A submission of a form tool seen by a form trigger (a signup form marked for intent sends a snapshot instead)">Last form-trigger submission</th></tr></thead><tbody>
${check.origins.map(
  (o) => html`<tr><td data-label="Origin"><code>${o.origin}</code></td>
<td data-label="Covered">${o.covered ? html`<span class="badge good">yes</span>` : html`<span class="badge bad">not covered</span>`}</td>
<td data-label="Config">${when(o.lastConfig)}${o.configCount ? html` <span class="hint">(${o.configCount}×)</span>` : ''}</td>
<td data-label="Snapshot">${when(o.lastSnapshot)}${o.snapshotCount ? html` <span class="hint">(${o.snapshotCount}×)</span>` : ''}</td>
<td data-label="Form trigger">${when(o.lastFormSubmission)}${o.formSubmissionCount ? html` <span class="hint">(${o.formSubmissionCount}×)</span>` : ''}</td></tr>`,
)}</tbody></table></div>`;
  const refusals =
    check.refusals.length === 0
      ? html`<p class="muted">No origin refused.</p>`
      : html`<ul class="refusals">${check.refusals.map(
          (r) => html`<li>${badge('refused')} ${r.explanation} <span class="hint">${r.count}×, last ${when(r.lastSeen)}</span></li>`,
        )}</ul>`;
  return html`<div class="install-check" id="check-${site.id}" data-live="${installCheckPath(site.id)}" data-live-every="3"${seen ? html` data-live-done` : ''}>
<h3>Install check</h3>
<p class="hint">What the collector saw per page origin${seen ? ' (reload for newer traffic)' : ', live until the first page view arrives'}.</p>
${origins}
<h3>Refused origins</h3>
${refusals}
</div>`;
}

function siteCard(session: DashboardSession, publicUrl: string, view: SiteView): Html {
  const { site } = view;
  const name = withoutControlCharacters(site.name);
  return html`<section class="card" id="${site.id}">
<h2>${name}</h2>
<p class="hint">Site key <code>${site.site_key}</code> · id <code>${site.id}</code> · <a href="/dashboard/events?site_id=${site.id}">Events of this site</a></p>
${siteErrorSummary(view)}
<form method="post" action="/dashboard/sites/${site.id}#${site.id}-error" aria-label="Settings of ${name}">
${csrfField(session)}
<div class="grid">
${field(view, 'name', 'Name', '', site.name)}
${field(view, 'domain', 'Domain', 'The origin your pages are on; subdomains are covered too. Empty: none.', site.domain ?? '')}
${field(view, 'timezone', 'Time zone', 'IANA name, used for conversion times.', site.timezone)}
</div>
<div class="actions"><button type="submit">Save</button></div>
</form>
${site.domain ? '' : html`<div class="notice warn" style="margin-top:14px">No domain yet: the collector refuses every page until you set one.</div>`}
<h3 id="install-${site.id}">Install snippet</h3>
<p class="hint">Paste into every page, in <code>&lt;head&gt;</code> or before <code>&lt;/body&gt;</code>.</p>
${copyable(`snippet-${site.id}`, installSnippet(publicUrl, site.site_key))}
<details><summary>Tag manager (Google Tag Manager Custom HTML)</summary>
<p class="hint">For a tag manager that runs Custom HTML as script: the same loader, its script element created by code.</p>
${copyable(`gtm-${site.id}`, tagManagerSnippetOf(publicUrl, site.site_key))}
</details>
${installCheckSection(view)}
</section>`;
}

/** A refused Add site form: what was wrong, and what was typed (shown again). */
export interface NewSiteError extends FormRefusal {
  values: { name: string; domain: string };
}

/** Where a page of the Sites page is in the account's sites: the cursor it started after, and the next page's. */
export interface SitesPaging {
  after?: unknown;
  next: string | null;
}

/** The links to the first and the next page of sites, when the account has more than one page. */
function sitesPaging(paging: SitesPaging | undefined): Html | string {
  if (!paging || (paging.after === undefined && paging.next === null)) return '';
  return html`<nav class="card" aria-label="More sites"><p>${paging.after !== undefined ? 'Later sites of the account, in the order they were added.' : 'The first sites of the account, in the order they were added.'}</p>
<div class="actions">${paging.after !== undefined ? html`<a href="/dashboard/sites">First sites</a>` : ''}${paging.next !== null ? html`<a href="/dashboard/sites?starting_after=${encodeURIComponent(paging.next)}">Next sites →</a>` : ''}</div></nav>`;
}

/**
 * The Sites page; `newSiteError` shows a refused Add site form again with its values and the reason beside its field,
 * `paging` where this page is among the account's sites.
 */
export function sitesPage(session: DashboardSession, publicUrl: string, views: readonly SiteView[], notices: Notice[] = [], newSiteError?: NewSiteError, paging?: SitesPaging): string {
  const problem = (name: 'name' | 'domain') => problemOf(newSiteError, name);
  const invalid = (name: 'name' | 'domain') => problem(name) !== null;
  return layout(
    { title: 'Sites', nav: 'sites', session, notices },
    html`<h1>Sites</h1>
<p class="lead">A site is where the loader runs: its domain decides which pages may send click data.</p>
${views.map((view) => siteCard(session, publicUrl, view))}
${sitesPaging(paging)}
<section class="card" id="add-site">
<h2>Add a site</h2>
${newSiteError ? refusalSummary('new-site-error', newSiteError, (param) => (param === 'name' || param === 'domain' ? `new-site-${param}` : undefined)) : ''}
<form method="post" action="/dashboard/sites#new-site-error">
${csrfField(session)}
<div class="grid">
<div><label for="new-site-name">Name</label><input type="text" id="new-site-name" name="name" placeholder="Shop, or app.example.com" required maxlength="${SITE_NAME_MAX}" value="${newSiteError?.values.name ?? ''}"${fieldAttributes('new-site-name', [], invalid('name'))}>
${fieldError('new-site-name', problem('name'))}</div>
<div><label for="new-site-domain">Domain</label><input type="text" id="new-site-domain" name="domain" placeholder="https://www.example.com" value="${newSiteError?.values.domain ?? ''}"${fieldAttributes('new-site-domain', ['new-site-domain-hint'], invalid('domain'))}>
<span class="hint" id="new-site-domain-hint">Optional: no page can send anything until it is set.</span>${fieldError('new-site-domain', problem('domain'))}</div>
</div>
<div class="actions"><button type="submit" class="secondary">Add site</button></div>
</form>
</section>`,
  );
}
