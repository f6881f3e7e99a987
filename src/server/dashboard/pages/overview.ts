/**
 * The Overview page, the dashboard's first page: the setup checklist (its steps tick themselves from the account's
 * state, and the list refreshes itself while steps remain, so a connection made on a hosted page in another tab shows
 * here without a reload), then where to go next.
 */
import { html, layout, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import type { SetupStep } from '../setup';
import type { Attention } from '../views';
import { ATTENTION_COUNT_CAP } from '../sql';

/** Path of the checklist's live fragment. */
export const SETUP_FRAGMENT_PATH = '/dashboard/setup/checklist';

/** The checklist section: the same markup on the page and as its live fragment. */
export function checklistSection(steps: readonly SetupStep[]): Html {
  const done = steps.filter((s) => s.done).length;
  const complete = done === steps.length;
  const current = steps.find((s) => !s.done);
  const percent = Math.round((done / steps.length) * 100);
  return html`<section class="card" id="setup" aria-labelledby="setup-title" data-live="${SETUP_FRAGMENT_PATH}" data-live-every="3"${complete ? html` data-live-done` : ''}>
<h2 id="setup-title">${complete ? 'Setup complete' : 'Set up cnv'}</h2>
<p class="hint" id="setup-progress" data-live-summary>${done} of ${steps.length} steps done${complete ? ': conversions reach your ad platforms.' : '. Each step ticks itself as soon as cnv sees it done.'}</p>
<div class="progress" role="progressbar" aria-labelledby="setup-progress" aria-valuemin="0" aria-valuemax="${steps.length}" aria-valuenow="${done}"><span style="width:${percent}%"></span></div>
<ol class="checklist">
${steps.map((step) => {
  const state = step.done ? 'done' : step === current ? 'current' : 'todo';
  return html`<li class="${state}" id="step-${step.id}">
<span class="mark" aria-hidden="true"></span>
<div><h3>${step.title} <span class="visually-hidden">(${step.done ? 'done' : state === 'current' ? 'next step' : 'to do'})</span></h3>
<p class="${step.done ? 'hint' : ''}">${step.done && step.doneText ? step.doneText : step.detail}</p></div>
<a class="go${state === 'current' ? ' button' : ''}" href="${step.href}">${step.action}<span class="visually-hidden">: ${step.title}</span></a>
</li>`;
})}
</ol>
${complete ? '' : html`<p class="live-note">This list updates by itself while it is open.</p>`}
</section>`;
}

/** A count as the Overview says it: past the cap, "1,000 or more". */
function howMany(n: number, one: string, many: string): string {
  return n >= ATTENTION_COUNT_CAP ? `${ATTENTION_COUNT_CAP.toLocaleString('en')} or more ${many}` : `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** What needs a person's attention, each with the place that deals with it; nothing when all is well. */
export function attentionSection(attention: Attention | undefined): Html | string {
  if (!attention) return '';
  const items: Html[] = [
    ...attention.reconnect.map(
      (label) => html`<li><span><strong>${label}</strong> needs to be connected again: its conversions wait until it is.</span><a class="button small" href="/dashboard/destinations">Reconnect</a></li>`,
    ),
    ...(attention.failed > 0
      ? [html`<li><span><strong>${howMany(attention.failed, 'conversion', 'conversions')}</strong> failed to reach an ad platform in the last ${attention.days} days; each says what to change. Once it is fixed, <a href="/dashboard/destinations">Destinations</a> sends a platform's failed deliveries again with one press.</span><a class="button small secondary" href="/dashboard/events?status=failed">See them</a></li>`]
      : []),
    ...(attention.waiting > 0
      ? [html`<li><span><strong>${howMany(attention.waiting, 'conversion has', 'conversions have')}</strong> waited more than an hour to be sent (a platform to reconnect, a snapshot that never came, a platform that keeps refusing).</span><a class="button small secondary" href="/dashboard/events?status=queued">See them</a></li>`]
      : []),
  ];
  if (items.length === 0) return '';
  return html`<section class="card attention" aria-labelledby="attention-title">
<h2 id="attention-title">Needs your attention</h2>
<ul class="attention-list">${items}</ul>
</section>`;
}

/** The Overview page. */
export function overviewPage(session: DashboardSession, steps: readonly SetupStep[], notices: Notice[] = [], attention?: Attention): string {
  const complete = steps.every((s) => s.done);
  return layout(
    { title: 'Overview', nav: 'overview', session, notices },
    html`<h1>${complete ? 'Overview' : 'Welcome to cnv'}</h1>
<p class="lead">${
      complete
        ? 'Your conversions reach your ad platforms with the click that brought them.'
        : 'cnv sends the signups of your site to your ad platforms with the ad click that brought each one. Seven steps, a few minutes.'
    }</p>
${attentionSection(attention)}
${checklistSection(steps)}`,
  );
}
