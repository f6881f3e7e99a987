/** `/welcome?user=…`: where the signup lands; shows, live, what happened to the conversion. */
import type { Journey } from '../journey';
import type { PaidStage, Signup } from '../signups';
import { splitName } from '../signups';
import { moneyOf } from '../../protocol/money';
import { html, type Html } from '../../server/http/html';
import { journeyFragment } from './journey-view';
import { layout, type PageContext } from './layout';

/** The path the welcome page polls for a fresh timeline. */
export function journeyPath(userId: string): string {
  return `/welcome/journey?${new URLSearchParams({ user: userId })}`;
}

/** The label of the upgrade button, e.g. "Upgrade to paid (29 EUR)". */
export function upgradeLabel(plan: PaidStage): string {
  return `Upgrade to paid (${plan.value} ${plan.currency})`;
}

/** The store's billing card: the user's plan, and the one change it offers next (upgrade, then refund). */
function planCard(signup: Signup, plan: PaidStage, notice: string | null): Html {
  const price = moneyOf(plan.value, plan.currency);
  const hidden = html`<input type="hidden" name="user" value="${signup.id}">`;
  const state = signup.refund ? 'refunded' : signup.upgrade ? 'paid' : 'trial';
  const content =
    state === 'trial'
      ? html`<h2>Your plan: free trial</h2>
  <p class="muted small">Upgrading makes the store’s backend report the payment to cnv as a <em>later stage</em> worth ${price},
  with nothing but your customer id: cnv finds the ad click you came from through your signup, and tells every ad platform.</p>
  <form method="post" action="/welcome/upgrade">${hidden}<button class="button" type="submit">${upgradeLabel(plan)}</button></form>`
      : state === 'paid'
        ? html`<div class="billing-head"><h2>Your plan: paid, ${price}</h2><span class="pill ok">active</span></div>
  <p class="muted small">A refund makes the backend retract the paid-plan conversion: cnv takes it back on each platform that
  has such an operation, and says why where a platform has none.</p>
  <form method="post" action="/welcome/refund">${hidden}<button class="button ghost" type="submit">Refund</button></form>`
        : html`<h2>Your payment was refunded</h2>
  <p class="muted small">The payment of ${price} was refunded, and the backend retracted its conversion. See below what each ad platform did with it.</p>`;
  return html`<section class="card billing" id="plan" data-plan="${state}">
  ${notice ? html`<p class="pill bad" role="alert">${notice}</p>` : ''}
  ${content}
</section>`;
}

/** The welcome page of a signup; `notice` says why a plan change was refused. */
export function welcomePage(ctx: PageContext, signup: Signup, journey: Journey, options: { plan: PaidStage; notice?: string | null }): Html {
  const first = splitName(signup.name).firstName ?? signup.name;
  const body = html`
<h1>Welcome aboard, ${first}!</h1>
<p class="lead">Your account <code>${signup.email}</code> is ready. Here is, live, what happened behind the scenes:
from the visit that brought you here (an ad click, when it came from one) to the conversions the ad platforms received.</p>
${planCard(signup, options.plan, options.notice ?? null)}
<section class="card" id="journey" data-live-src="${journeyPath(signup.id)}" data-live-every="700">
  ${journeyFragment(journey)}
</section>
<div class="actions">
  <a class="button" href="/">Start again with a new ad click</a>
  <a class="button ghost" href="/events">All events of the demo site</a>
</div>`;
  return layout(ctx, { title: 'Welcome aboard', nav: null, body });
}

/** The welcome page of a user the demo does not know (it keeps signups in memory only). */
export function unknownSignupPage(ctx: PageContext): Html {
  const body = html`
<h1>We don’t know this user</h1>
<p class="lead">The demo store keeps its signups in memory, so it forgets them when the service restarts. (A person
erased through cnv has new ids on their events, which the store never knew.) The events themselves are still in cnv.</p>
<div class="actions"><a class="button" href="/pricing">Sign up again</a><a class="button ghost" href="/events">All events</a></div>`;
  return layout(ctx, { title: 'Unknown user', nav: null, body });
}
