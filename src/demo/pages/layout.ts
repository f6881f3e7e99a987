/** The frame of every demo page: the demo ribbon (a landmark of its own, beside the store's), the pretend store's header, and the real install snippet. */
import { installSnippet as snippetFor } from '../../protocol/install';
import { html, raw, type Html } from '../../server/http/html';

/** What every page needs to know about the running demo. */
export interface PageContext {
  /** Base URL of the service (the loader is fetched from it, as a customer's page would). */
  serviceUrl: string;
  /** The demo site's public key, for the snippet. */
  siteKey: string;
}

export type NavItem = 'home' | 'pricing' | 'events' | null;

/** The install snippet exactly as a customer pastes it. */
export function installSnippet(ctx: PageContext): Html {
  return raw(snippetFor(ctx.serviceUrl, ctx.siteKey));
}

/** A whole page. `live` names what the page's script keeps up to date (see assets/live-script). */
export function layout(ctx: PageContext, page: { title: string; nav: NavItem; body: Html; live?: string }): Html {
  const link = (item: Exclude<NavItem, null>, href: string, label: string) =>
    html`<a href="${href}"${page.nav === item ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Demo store</title>
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/demo.css">
${installSnippet(ctx)}
<script defer src="/assets/demo.js"></script>
</head>
<body${page.live ? html` data-live="${page.live}"` : ''}>
<aside class="ribbon" aria-label="About this demo"><div class="wrap">
  <span><strong>cnv demo</strong> · a pretend customer site on its own origin, with the cnv loader installed from <code>${ctx.serviceUrl}</code></span>
  <span><a href="/events">Events seen by cnv</a></span>
</div></aside>
<header class="site"><div class="wrap">
  <a class="brand" href="/"><span class="brand-mark"></span>Demo store</a>
  <nav aria-label="Store">${link('home', '/', 'Home')}${link('pricing', '/pricing', 'Pricing')}${link('events', '/events', 'Events')}</nav>
</div></header>
<main><div class="wrap">
${page.body}
</div></main>
<footer><div class="wrap">
  This page is served by the demo backend, not by cnv. It only loads the snippet
  <code>${installSnippet(ctx).value}</code>
</div></footer>
</body>
</html>
`;
}
