/** The hosted handoff pages: a destination's consent form, the API trigger source setup, and their end states. */
import { html, page, type Html } from '../../http/page';
import type { HostedHandoff, WebhookTarget } from './completion';
import type { DestinationPlatform, Problem } from '../../destinations';
import { SIGNATURE_HEADER, SIGNATURE_TOLERANCE_SECONDS, WEBHOOK_PREFIX } from '../../../protocol/webhook';
import { CORRELATION_COOKIE } from '../../../protocol/cookies';

type DestinationHandoff = Extract<HostedHandoff, { kind: 'destination' }>;
type TriggerSourceHandoff = Extract<HostedHandoff, { kind: 'trigger_source' }>;

/** The consent screen of a destination, with the form (and, after a bad submit, its errors and non-secret values). */
export function destinationFormPage(hosted: DestinationHandoff, values: Record<string, string> = {}, errors: Problem[] = []): string {
  const kind = hosted.destination;
  const fields = kind.fields.map((field) => {
    const error = errors.find((e) => e.param === field.name);
    const value = field.secret ? '' : (values[field.name] ?? '');
    return html`
<label for="${field.name}">${field.label}<span class="hint">${field.hint}</span></label>
<input type="${field.secret ? 'password' : 'text'}" id="${field.name}" name="${field.name}" value="${value}"
  placeholder="${field.placeholder ?? ''}" autocomplete="off" ${field.required ? html`required` : ''} ${error ? html`aria-invalid="true"` : ''}>
${error ? html`<p class="field-error">${error.message}</p>` : ''}`;
  });
  return page(
    `Connect ${kind.label}`,
    html`<h1>Connect ${kind.label}</h1>
${destinationIntro(hosted)}
${errors.length > 0 ? html`<div class="notice warn">Please correct the fields marked below.</div>` : ''}
${hosted.destination.oauth ? html`<div class="notice good">Signed in with ${kind.label}. Now tell cnv which account to send to.</div>` : ''}
<form method="post">
${fields}
<button type="submit">Connect ${kind.label}</button>
</form>`,
  );
}

/** After connecting a destination. */
export function destinationConnectedPage(kind: DestinationPlatform, summary: string): string {
  return page(
    `${kind.label} connected`,
    html`<h1>${kind.label} connected</h1>
<div class="notice good">${summary} is now connected. You can close this page; the application that sent you here sees the handoff as completed.</div>`,
  );
}

function signingRules(webhook: WebhookTarget, siteKey: string): Html {
  return html`<h2>Signing each request</h2>
<ol>
<li>Signing string: <code>{timestamp}.POST.{path}.{body}</code>: Unix seconds, the literal <code>POST</code>, the URL path from <code>${WEBHOOK_PREFIX}/</code> on (no host, no query), and the exact JSON bytes you send.</li>
<li>Signature: HMAC-SHA256 of the signing string with the webhook secret as key, hex-encoded.</li>
<li>Header: <code>${SIGNATURE_HEADER}: t=&lt;timestamp&gt;,v1=&lt;hex&gt;</code>, with <code>Content-Type: application/json</code>.</li>
<li>Re-sign every retry with a fresh timestamp: signatures older than ${Math.round(SIGNATURE_TOLERANCE_SECONDS / 60)} minutes are rejected. A 401 almost always means a signature mismatch (often a re-serialised body).</li>
</ol>
<p>Body: <code>{"correlation_token": …, "customer_event_id": "…", "email": …}</code>, where <code>correlation_token</code> is the value of the
<code>${CORRELATION_COOKIE}</code> cookie on your signup request. The <code>cnv/client</code> library does all of this:</p>
<pre>import { createCnvClient } from 'cnv/client';
const cnv = createCnvClient({ webhookBaseUrl: '${webhookBaseOf(webhook)}', siteKey: '${siteKey}', triggerKey: '…', secret: process.env.CNV_WEBHOOK_SECRET });
await cnv.reportSignup({ request: req, customerEventId: user.id, email: user.email });</pre>`;
}

function webhookBaseOf(webhook: WebhookTarget): string {
  return webhook.urlTemplate.slice(0, webhook.urlTemplate.indexOf(WEBHOOK_PREFIX));
}

function webhookUrls(webhook: WebhookTarget): Html {
  return html`<dt>Webhook URL</dt>
<dd><pre>${webhook.urlTemplate}</pre>
Replace <code>{trigger_key}</code> with the key of your flow's API trigger (1 to 64 characters of <code>A-Z a-z 0-9 _ -</code>).
${
  webhook.known.length > 0
    ? html`Keys your flows on this site already use:<ul>${webhook.known.map((k) => html`<li><code>${k.key}</code>: <code>${k.url}</code></li>`)}</ul>`
    : ''
}</dd>`;
}

/** The first step of connecting the API trigger source: what will happen, and the button that does it. */
export function triggerSourceIntroPage(hosted: TriggerSourceHandoff): string {
  return page(
    'Connect your backend',
    html`<h1>Connect your backend to ${hosted.site.name}</h1>
<p class="lead">Your server will report signups to cnv through a signed webhook (the API trigger).</p>
<div class="notice">Continuing creates the webhook secret of this site and shows it <strong>once</strong>, on the next page only.
If the site already has a secret, it is replaced; the old one keeps working for 24 hours.</div>
<dl>${webhookUrls(hosted.webhook)}</dl>
<form method="post"><button type="submit">Create the webhook secret</button></form>`,
  );
}

/** The secret, shown this once, with the URL and the signing rules. */
export function triggerSourceConnectedPage(hosted: TriggerSourceHandoff, secret: string, rotated: boolean): string {
  return page(
    'Webhook secret',
    html`<h1>Your backend can now report signups</h1>
<div class="notice warn"><strong>Copy the secret now.</strong> It is shown only on this page and cannot be shown again.
Keep it on your server (for example in <code>CNV_WEBHOOK_SECRET</code>). Lost it? Open a new connect_trigger_source handoff, or ask the operator to run
<code>cnv webhook-secret rotate --site ${hosted.site.id}</code>.</div>
${rotated ? html`<div class="notice">This replaced the site's previous secret, which keeps verifying for 24 hours.</div>` : ''}
<dl>
<dt>Site key</dt><dd><code>${hosted.site.site_key}</code></dd>
${webhookUrls(hosted.webhook)}
<dt>Webhook secret</dt><dd><pre>${secret}</pre></dd>
</dl>
${signingRules(hosted.webhook, hosted.site.site_key)}`,
  );
}

/** A handoff that is already completed: nothing more can be done here. */
export function completedPage(hosted: HostedHandoff): string {
  const what =
    hosted.kind === 'destination'
      ? html`${hosted.destination.label} was connected through this link.`
      : html`The webhook secret of ${hosted.site.name} was created through this link and shown once. To get a new one, open a new connect_trigger_source handoff or run <code>cnv webhook-secret rotate --site ${hosted.site.id}</code>.`;
  return page(
    'Already completed',
    html`<h1>This link was already used</h1>
<div class="notice good">${what}</div>
<p>This link cannot change anything any more. You can close this page.</p>`,
  );
}

/** An unknown (or malformed) link. */
export function notFoundPage(): string {
  return page(
    'Link not found',
    html`<h1>This link is not valid</h1>
<p>Check that you opened the whole link you were given. Links of connect requests are created by the application you are connecting; ask it for a new one.</p>`,
  );
}

/** What every page of a destination handoff says first: who asks, what cnv will do, and what it would replace. */
function destinationIntro(hosted: DestinationHandoff): Html {
  const kind = hosted.destination;
  return html`<p class="lead">An application using your cnv account asks to connect ${kind.label} as a destination.</p>
<div class="notice">${kind.consent}</div>
${replaceWarning(hosted)}`;
}

/** A warning when this handoff would replace what the account has connected of this type already. */
function replaceWarning(hosted: DestinationHandoff): Html | string {
  if (!hosted.replaces) return '';
  const what =
    hosted.replaces.status === 'reauthorization_required'
      ? html`Your ${hosted.destination.label} connection needs a new authorization: completing this page restores it, and the conversions waiting for it are sent.`
      : html`This account already has a ${hosted.destination.label} connection. <strong>Completing this page replaces it</strong>: every flow sending to ${hosted.destination.label} will use the account you enter here.`;
  return html`<div class="notice warn">${what}</div>`;
}

/** The first step of a destination connected by OAuth: what will happen, and the sign-in link. */
export function destinationSignInPage(hosted: DestinationHandoff, problem?: string): string {
  const kind = hosted.destination;
  return page(
    `Connect ${kind.label}`,
    html`<h1>Connect ${kind.label}</h1>
${destinationIntro(hosted)}
${problem ? html`<div class="notice warn">${problem}</div>` : ''}
<p>First sign in with ${kind.label} and allow cnv to send conversions. You come back here to pick the account.</p>
<p><a class="button" href="/handoffs/${hosted.handoff.token}/authorize">Sign in with ${kind.label}</a></p>`,
  );
}

/** The service has no OAuth client for the platform: say which setting the operator must set. */
export function oauthNotConfiguredPage(hosted: DestinationHandoff, setting: string): string {
  const kind = hosted.destination;
  return page(
    `${kind.label} is not set up`,
    html`<h1>${kind.label} cannot be connected yet</h1>
<div class="notice warn">This cnv service has no OAuth client for ${kind.label}. The operator must set <code>${setting}</code> (and its client secret) and restart the service; cnv's documentation explains it in docs/destinations/${kind.type}.md.</div>`,
  );
}
