/** The journey timeline as markup: rendered into the welcome page and re-fetched by the page while it changes. */
import type { Journey, JourneyStep } from '../journey';
import { html, type Html } from '../../server/http/html';

const STATE_CLASS: Record<JourneyStep['state'], string> = { done: 'done', waiting: 'waiting', failed: 'failed', skipped: '' };
const STATE_PILL: Record<JourneyStep['state'], Html> = {
  done: html`<span class="pill ok">done</span>`,
  waiting: html`<span class="pill wait">waiting</span>`,
  failed: html`<span class="pill bad">failed</span>`,
  skipped: html`<span class="pill none">skipped</span>`,
};

function uploadView(step: JourneyStep): Html {
  if (!step.upload) return html``;
  const { conversion, path, answeredStatus, problems } = step.upload;
  return html`<div class="detail">
    <div class="small muted">POST <code>${path}</code> · answered ${answeredStatus ?? '…'}${
      problems.length > 0 ? html` · <span class="pill bad">${problems.join('; ')}</span>` : ''
    }</div>
    <pre class="upload" data-upload>${JSON.stringify(conversion, null, 2)}</pre>
  </div>`;
}

function stepView(step: JourneyStep): Html {
  return html`<li class="${STATE_CLASS[step.state]}" data-step="${step.key}" data-state="${step.state}">
    <h3>${step.title} ${STATE_PILL[step.state]}</h3>
    <div class="detail muted">${step.summary}</div>
    ${step.facts.length > 0 ? html`<dl class="kv detail">${step.facts.map(([k, v]) => html`<dt>${k}</dt><dd><code>${v}</code></dd>`)}</dl>` : ''}
    ${uploadView(step)}
  </li>`;
}

/** The timeline; `data-final` tells the page's script whether to keep polling. */
export function journeyFragment(journey: Journey): Html {
  return html`<div data-final="${journey.final ? 'true' : 'false'}"><ol class="timeline">${journey.steps.map(stepView)}</ol></div>`;
}
