/** `/welcome?user=…`: where the signup lands; shows, live, what happened to the conversion. */
import type { Journey } from '../journey';
import type { Signup } from '../signups';
import { splitName } from '../signups';
import { html, type Html } from '../../server/http/html';
import { journeyFragment } from './journey-view';
import { layout, type PageContext } from './layout';

/** The path the welcome page polls for a fresh timeline. */
export function journeyPath(userId: string): string {
  return `/welcome/journey?${new URLSearchParams({ user: userId })}`;
}

/** The welcome page of a signup. */
export function welcomePage(ctx: PageContext, signup: Signup, journey: Journey): Html {
  const first = splitName(signup.name).firstName ?? signup.name;
  const body = html`
<h1>Welcome aboard, ${first}!</h1>
<p class="lead">Your account <code>${signup.email}</code> is ready. Here is, live, what happened behind the scenes:
from the ad click you arrived with to the conversions the ad platforms received.</p>
<section class="card" id="journey" data-live-src="${journeyPath(signup.id)}" data-live-every="700">
  ${journeyFragment(journey)}
</section>
<div class="actions">
  <a class="button" href="/">Start again with a new ad click</a>
  <a class="button ghost" href="/events">All events of the demo site</a>
</div>`;
  return layout(ctx, { title: 'Welcome', nav: null, body });
}

/** The welcome page of a user the demo does not know (it keeps signups in memory only). */
export function unknownSignupPage(ctx: PageContext): Html {
  const body = html`
<h1>We don’t know this user</h1>
<p class="lead">The demo store keeps its signups in memory, so they are forgotten when the service restarts.
The events themselves are still in cnv.</p>
<div class="actions"><a class="button" href="/pricing">Sign up again</a><a class="button ghost" href="/events">All events</a></div>`;
  return layout(ctx, { title: 'Unknown user', nav: null, body });
}
