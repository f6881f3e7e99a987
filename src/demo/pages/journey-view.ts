/** The journey timeline as markup: rendered into the welcome page and re-fetched by the page while it changes. */
import type { Delivery, Journey, JourneyStep, StepState } from '../journey';
import type { ReceivedRequest } from '../platform-requests';
import { html, type Html } from '../../server/http/html';

const STATE_CLASS: Record<StepState, string> = { done: 'done', waiting: 'waiting', failed: 'failed', skipped: '' };
const STATE_PILL: Record<StepState, Html> = {
  done: html`<span class="pill ok">done</span>`,
  waiting: html`<span class="pill wait">waiting</span>`,
  failed: html`<span class="pill bad">failed</span>`,
  skipped: html`<span class="pill none">skipped</span>`,
};
const STATUS_PILL: Record<StepState, string> = { done: 'ok', waiting: 'wait', failed: 'bad', skipped: 'none' };

function answerPill(status: number | null): Html {
  if (status === null) return html`<span class="pill wait">no answer yet</span>`;
  return html`<span class="pill ${status >= 200 && status < 300 ? 'ok' : 'bad'}">answered ${status}</span>`;
}

function requestView(request: ReceivedRequest, count: number): Html {
  return html`<div class="request">
    <div class="request-line"><span class="method">${request.method}</span> <code class="path">${request.path}</code> ${answerPill(request.answeredStatus)}</div>
    ${request.problems.length > 0 ? html`<p class="pill bad">${request.problems.join('; ')}</p>` : ''}
    <pre class="request-body" data-request-body tabindex="0" aria-label="Request body">${JSON.stringify(request.body, null, 2)}</pre>
    <div class="small muted">${count > 1 ? `The latest of ${count} requests (retries included). ` : ''}The access token it carried is not shown.</div>
  </div>`;
}

function deliveryView(delivery: Delivery): Html {
  return html`<article class="delivery ${STATE_CLASS[delivery.state]}" data-delivery="${delivery.destination}" data-state="${delivery.state}">
    <header>
      <h4>${delivery.label} <span class="muted small">local fake</span></h4>
      <span class="pill ${STATUS_PILL[delivery.state]}" data-delivery-status>${delivery.status}</span>
    </header>
    <p class="small muted">${delivery.summary}${delivery.clickNote ? html` ${delivery.clickNote}` : ''}</p>
    ${delivery.facts.length > 0 ? html`<dl class="kv small">${delivery.facts.map(([k, v]) => html`<dt>${k}</dt><dd><code>${v}</code></dd>`)}</dl>` : ''}
    ${delivery.request ? requestView(delivery.request, delivery.requestCount) : ''}
  </article>`;
}

function stepView(step: JourneyStep): Html {
  return html`<li class="${STATE_CLASS[step.state]}" data-step="${step.key}" data-state="${step.state}">
    <h3>${step.title} ${STATE_PILL[step.state]}</h3>
    <div class="detail muted">${step.summary}</div>
    ${step.facts.length > 0 ? html`<dl class="kv detail">${step.facts.map(([k, v]) => html`<dt>${k}</dt><dd><code>${v}</code></dd>`)}</dl>` : ''}
    ${step.deliveries && step.deliveries.length > 0 ? html`<div class="deliveries">${step.deliveries.map(deliveryView)}</div>` : ''}
  </li>`;
}

/** The timeline in one line: how many steps are done, and the step it is at (what a screen reader hears when it changes). */
export function journeySummary(journey: Journey): string {
  const steps = journey.steps.filter((step) => step.state !== 'skipped');
  const done = steps.filter((step) => step.state === 'done').length;
  const at = steps.find((step) => step.state !== 'done');
  return `${done} of ${steps.length} steps done${at ? `; ${at.title}: ${at.state}` : ''}.`;
}

/** The timeline; `data-final` tells the page's script whether to keep polling. */
export function journeyFragment(journey: Journey): Html {
  return html`<div data-final="${journey.final ? 'true' : 'false'}"><p class="visually-hidden" data-live-summary>${journeySummary(journey)}</p><ol class="timeline">${journey.steps.map(stepView)}</ol></div>`;
}
