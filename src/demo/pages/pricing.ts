/** `/pricing`: a later page of the visit, with the signup form marked as a conversion surface. */
import { SIGNUP_INTENT_ATTRIBUTE } from '../../protocol/install';
import { html, raw, type Html } from '../../server/http/html';
import { fieldAttributes, fieldError } from '../../server/http/field-error';
import { layout, type PageContext } from './layout';
import { DEMO } from '../setup';
import { moneyOf } from '../../protocol/money';
import type { SignupFormErrors } from '../signups';

/** The plans, priced in the currency the demo's paid stage reports (DEMO.paidPlan: EUR 29 for Team). */
const PLANS = [
  { name: 'Starter', price: 'EUR 0', per: 'free for 14 days', features: ['50 labels a month', 'Email tracking updates'] },
  { name: 'Team', price: moneyOf(DEMO.paidPlan.value, DEMO.paidPlan.currency)!.replace(/\.00$/, ''), per: 'per month', features: ['1,000 labels a month', 'Pickup booking', 'Five seats'], featured: true },
  { name: 'Scale', price: 'EUR 99', per: 'per month', features: ['Unlimited labels', 'API access', 'Priority support'] },
];

/**
 * The pricing page; after a rejected submit, each field's message (`errors`) is shown under it and the first wrong
 * field takes the focus (so a screen reader reads it with its message); `error`, naming no field, above the form.
 */
export function pricingPage(ctx: PageContext, form: { error?: string | null; errors?: SignupFormErrors; email?: string; name?: string } = {}): Html {
  const invalid = (name: 'email' | 'name') => Boolean(form.errors?.[name]);
  const first = (['email', 'name'] as const).find(invalid);
  const marks = (name: 'email' | 'name') => html`${fieldAttributes(name, [], invalid(name))}${first === name ? html` autofocus` : ''}`;
  const plans = PLANS.map(
    (plan) => html`<div class="card plan${plan.featured ? ' featured' : ''}">
      <h2>${plan.name}</h2>
      <div class="price">${plan.price}</div><div class="muted small">${plan.per}</div>
      <ul>${plan.features.map((f) => html`<li>${f}</li>`)}</ul>
    </div>`,
  );
  const body = html`
<h1>Pricing</h1>
<p class="lead">Every plan starts with a free trial. No card needed.</p>
<section class="plans">${plans}</section>
<section class="signup">
  <div class="card">
    <h2>Start your free trial</h2>
    ${form.error ? html`<p class="pill bad" role="alert">${form.error}</p>` : ''}
    <form class="stack" method="post" action="/signup" ${raw(SIGNUP_INTENT_ATTRIBUTE)}>
      <label for="email">Work email</label>
      <input id="email" name="email" type="email" required autocomplete="email" placeholder="ada@example.com" value="${form.email ?? ''}"${marks('email')}>
      ${fieldError('email', form.errors?.email ?? null)}
      <label for="name">Your name</label>
      <input id="name" name="name" type="text" required autocomplete="name" placeholder="Ada Lovelace" value="${form.name ?? ''}"${marks('name')}>
      ${fieldError('name', form.errors?.name ?? null)}
      <button class="button" type="submit">Create my account</button>
    </form>
  </div>
  <div>
    <div class="card note">
      <h2>What happens when you press the button</h2>
      <p>The form carries <code>${SIGNUP_INTENT_ATTRIBUTE}</code>. In the submit event, before the browser sends the form,
      the loader writes the cookie holding a fresh correlation token, so this very POST carries it to the store's backend,
      and it sends cnv a snapshot of your ad click under that token.</p>
      <p>The backend then reports the signup with the token; cnv pairs the two.</p>
    </div>
    <div class="card browser-state" data-browser-state>
      <h2>What the loader keeps in this browser</h2>
    </div>
  </div>
</section>`;
  return layout(ctx, { title: 'Pricing', nav: 'pricing', body });
}
