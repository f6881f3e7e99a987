/**
 * `/`: the ad landing page. A visit whose URL carries click ids is what a click on an ad looks like; the demo's pretend
 * ad carries the click ids of all six platforms it delivers to, so one signup shows all six deliveries.
 */
import { html, type Html } from '../../server/http/html';
import { layout, type PageContext } from './layout';

/** The click ids of one pretend ad click: each as its platform writes it on the landing URL. */
export interface DemoClickIds {
  gclid: string;
  fbclid: string;
  msclkid: string;
  li_fat_id: string;
  rdt_cid: string;
  ttclid: string;
}

/** The query keys the demo's pretend ad carries, in the order they are shown. */
export const DEMO_CLICK_ID_KEYS = ['gclid', 'fbclid', 'msclkid', 'li_fat_id', 'rdt_cid', 'ttclid'] as const;

/** The link that plays the part of an ad: a landing URL decorated as the platforms' auto-tagging does, with UTMs. */
export function adClickHref(clickIds: DemoClickIds): string {
  const query = new URLSearchParams({ ...clickIds, utm_source: 'demo-ads', utm_medium: 'cpc', utm_campaign: 'demo' });
  return `/?${query}`;
}

/** The landing page; `clickIds` are the click ids of this visit's URL (empty when it came without any). */
export function landingPage(ctx: PageContext, visit: { clickIds: Array<[string, string]>; freshClickIds: DemoClickIds }): Html {
  const arrived = visit.clickIds.length > 0
    ? html`<div class="card note">
        <h2>You arrived from an ad</h2>
        <p>This visit's URL carries ${visit.clickIds.length === 1 ? 'this click id' : 'these click ids'}, as the ad platforms' auto-tagging writes them:</p>
        <dl class="kv click-ids">${visit.clickIds.map(([k, v]) => html`<dt>${k}</dt><dd><code>${v}</code></dd>`)}</dl>
        <p>The cnv loader read them as its first act and kept them in a first-party cookie, so a signup on another page,
        minutes or days later, is still credited to this click.</p>
      </div>`
    : html`<div class="card note">
        <h2>No ad click yet</h2>
        <p>This visit has no click id in its URL. Start the journey the way a real visitor does: by clicking an ad.</p>
        <p><a class="button" href="${adClickHref(visit.freshClickIds)}">Simulate an ad click</a></p>
      </div>`;
  const body = html`
<section class="hero">
  <div>
    <h1>Ship parcels without the paperwork.</h1>
    <p class="lead">Demo store prints labels, books pickups and tracks every parcel, for teams of any size.
    Start a free trial in under a minute.</p>
    <div class="actions">
      <a class="button" href="/pricing">See pricing and sign up</a>
      <a class="button ghost" href="${adClickHref(visit.freshClickIds)}">Simulate a new ad click</a>
    </div>
    ${arrived}
  </div>
  <aside class="card browser-state" data-browser-state>
    <h2>What the loader keeps in this browser</h2>
    <p class="muted small">Read live from this page's cookies (this origin's, not the service's).</p>
  </aside>
</section>
<h2>The journey you are about to watch</h2>
<ol class="timeline">
  <li class="${visit.clickIds.length > 0 ? 'done' : ''}"><h3>Ad click</h3><div class="detail muted">You land here with <code>?gclid=…&amp;fbclid=…&amp;msclkid=…&amp;li_fat_id=…&amp;rdt_cid=…&amp;ttclid=…</code>: a pretend ad click carrying the click id of each of the six ad platforms; the loader stores the click.</div></li>
  <li><h3>Signup intent</h3><div class="detail muted">On the pricing page you submit the signup form; in that very submit event the loader writes a correlation token cookie and snapshots the click to cnv.</div></li>
  <li><h3>Backend report</h3><div class="detail muted">This store's backend creates your account and reports the signup through the cnv Node client, signed with its webhook secret, carrying the token from your request's cookie.</div></li>
  <li><h3>Delivered to the ad platforms</h3><div class="detail muted">cnv pairs the report with the click and sends the conversion to Google Ads, Meta, Microsoft Advertising, LinkedIn, Reddit and TikTok, each with its own click id: here local fakes of their APIs, so nothing leaves this machine.</div></li>
</ol>`;
  return layout(ctx, { title: 'Ship parcels without the paperwork', nav: 'home', body });
}
