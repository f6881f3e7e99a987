/** `/`: the ad landing page. A visit with a gclid is what a click on a Google ad looks like. */
import { html, type Html } from '../../server/http/html';
import { layout, type PageContext } from './layout';

/** The link that plays the part of an ad: a landing URL decorated the way Google Ads auto-tagging does. */
export function adClickHref(gclid: string): string {
  const query = new URLSearchParams({ gclid, utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'demo' });
  return `/?${query}`;
}

/** The landing page; `clickId` is the gclid of this visit, if it has one. */
export function landingPage(ctx: PageContext, visit: { clickId: string | null; freshClickId: string }): Html {
  const arrived = visit.clickId
    ? html`<div class="card note">
        <h3>You arrived from an ad</h3>
        <p>This visit's URL carries the Google click id <code>${visit.clickId}</code>. The cnv loader read it as its first act
        and kept it in a first-party cookie, so a signup on another page, minutes or days later, is still credited to
        this click.</p>
      </div>`
    : html`<div class="card note">
        <h3>No ad click yet</h3>
        <p>This visit has no click id in its URL. Start the journey the way a real visitor does: by clicking an ad.</p>
        <p><a class="button" href="${adClickHref(visit.freshClickId)}">Simulate an ad click</a></p>
      </div>`;
  const body = html`
<section class="hero">
  <div>
    <h1>Ship parcels without the paperwork.</h1>
    <p class="lead">Demo store prints labels, books pickups and tracks every parcel, for teams of any size.
    Start a free trial in under a minute.</p>
    <div class="actions">
      <a class="button" href="/pricing">See pricing and sign up</a>
      <a class="button ghost" href="${adClickHref(visit.freshClickId)}">Simulate a new ad click</a>
    </div>
    ${arrived}
  </div>
  <aside class="card browser-state" data-browser-state>
    <h3>What the loader keeps in this browser</h3>
    <p class="muted small">Read live from this page's cookies (this origin's, not the service's).</p>
  </aside>
</section>
<h2>The journey you are about to watch</h2>
<ol class="timeline">
  <li class="${visit.clickId ? 'done' : ''}"><h3>Ad click</h3><div class="detail muted">You land here with <code>?gclid=…</code>; the loader stores the click.</div></li>
  <li><h3>Signup intent</h3><div class="detail muted">On the pricing page you submit the signup form; in that very submit event the loader writes a correlation token cookie and snapshots the click to cnv.</div></li>
  <li><h3>Backend report</h3><div class="detail muted">This store's backend creates your account and reports the signup through the cnv Node client, signed with its webhook secret, carrying the token from your request's cookie.</div></li>
  <li><h3>Delivered to Google Ads</h3><div class="detail muted">cnv pairs the report with the click and uploads a click conversion to Google Ads: here a local fake of its API, so nothing leaves this machine.</div></li>
</ol>`;
  return layout(ctx, { title: 'Welcome', nav: 'home', body });
}
