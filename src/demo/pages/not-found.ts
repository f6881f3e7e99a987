/** The demo store's page for an address it does not have (instead of the framework's JSON). */
import { html, type Html } from '../../server/http/html';
import { layout, type PageContext } from './layout';

export function notFoundPage(ctx: PageContext): Html {
  const body = html`
<h1>This page does not exist</h1>
<p class="lead">The demo store has a landing page, pricing, a signup, a welcome page per user and the list of events.</p>
<div class="actions"><a class="button" href="/">The landing page</a><a class="button ghost" href="/events">All events</a></div>`;
  return layout(ctx, { title: 'Page not found', nav: null, body });
}
