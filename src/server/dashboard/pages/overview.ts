/**
 * The Overview page, the dashboard's first page: the setup checklist (its steps tick themselves from the account's
 * state, and the list refreshes itself while steps remain, so a connection made on a hosted page in another tab shows
 * here without a reload), then where to go next.
 */
import { html, layout, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import type { SetupStep } from '../setup';

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
<p class="hint" id="setup-progress">${done} of ${steps.length} steps done${complete ? ': conversions reach your ad platforms.' : '. Each step ticks itself as soon as cnv sees it done.'}</p>
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

/** The Overview page. */
export function overviewPage(session: DashboardSession, steps: readonly SetupStep[], notices: Notice[] = []): string {
  const complete = steps.every((s) => s.done);
  return layout(
    { title: 'Overview', nav: 'overview', session, notices },
    html`<h1>${complete ? 'Overview' : 'Welcome to cnv'}</h1>
<p class="lead">${
      complete
        ? 'Your conversions reach your ad platforms with the click that brought them.'
        : 'cnv sends the signups of your site to your ad platforms with the ad click that brought each one. Seven steps, a few minutes.'
    }</p>
${checklistSection(steps)}`,
  );
}
