/**
 * The hosted handoff pages, in cnv's own voice: connect a platform to cnv (its logo, what cnv will send, the form), the
 * API trigger source setup, and their end states, each ending with a way back to the dashboard. The dashboard lives on
 * the same origin as these pages, so the way back is a relative link.
 */
import { copyable, html, page, type Html } from '../../http/page';
import { fieldAttributes, fieldError } from '../../http/field-error';
import { defaultChoice, type HostedHandoff, type WebhookTarget } from './completion';
import { oauthClientSetting, platformLogo, type ConnectField, type DestinationPlatform, type Problem } from '../../destinations';
import { SIGNATURE_HEADER, SIGNATURE_TOLERANCE_SECONDS, WEBHOOK_PREFIX } from '../../../protocol/webhook';
import { CORRELATION_COOKIE } from '../../../protocol/cookies';

type DestinationHandoff = Extract<HostedHandoff, { kind: 'destination' }>;
type TriggerSourceHandoff = Extract<HostedHandoff, { kind: 'trigger_source' }>;

/** Where each kind of handoff is followed up on the dashboard. */
const DASHBOARD_DESTINATIONS = '/dashboard/destinations';
const DASHBOARD_FLOWS = '/dashboard/flows';

/** The way back to the dashboard that ends every finished page. */
function backToDashboard(href: string, primary = true): Html {
  return html`<p class="back"><a class="button${primary ? '' : ' secondary'}" href="${href}">Back to the dashboard</a></p>`;
}

/** The page heading of a destination handoff: the platform's logo beside "Connect X to cnv". */
function destinationHeading(kind: DestinationPlatform, title: string): Html {
  return html`<div class="brandline">${platformLogo(kind.type, kind.label, 44)}<h1>${title}</h1></div>`;
}

/**
 * What a bad submit says above the form: an error of a field is marked at the field, and one of no field (the sign-in
 * to do again, say) is said here in full.
 */
function formErrorsNotice(fieldNames: readonly string[], errors: readonly Problem[]): Html | string {
  if (errors.length === 0) return '';
  const unplaced = errors.filter((e) => !fieldNames.includes(e.param));
  const marked = errors.length > unplaced.length;
  return html`<div class="notice warn" role="alert">${unplaced.map((e) => html`<p>${e.message}</p>`)}${marked ? 'Please correct the fields marked below.' : ''}</div>`;
}

/** The consent screen of a destination, with the form (and, after a bad submit, its errors and non-secret values). */
export function destinationFormPage(hosted: DestinationHandoff, values: Record<string, string> = {}, errors: Problem[] = []): string {
  const kind = hosted.destination;
  const chosen = (field: ConnectField) => field.beforeSignIn === true && Object.hasOwn(hosted.signInChoices, field.name);
  const shown = kind.fields.filter((field) => !(field.withoutSignIn && hosted.signedIn) && !hosted.provided.includes(field.name) && !chosen(field));
  const fakeValues = hosted.fakeValues ?? null;
  const fields = shown.map((field) => {
    const error = errors.find((e) => e.param === field.name);
    // A choice not sent starts where the connection this page replaces stands (a new token does not undo it).
    const value = field.secret ? '' : (values[field.name] ?? (field.choices ? defaultChoice(hosted, field) : ''));
    const fakeValue = fakeValues && Object.hasOwn(fakeValues, field.name) ? fakeValues[field.name]! : null;
    const notes = [field.hint ? `${field.name}-hint` : '', fakeValue !== null ? `${field.name}-fake` : ''].filter(Boolean);
    const marks = fieldAttributes(field.name, notes, Boolean(error));
    const control = field.choices
      ? choiceSelect(field.name, field.choices, value, marks)
      : html`<input type="${field.secret ? 'password' : 'text'}" id="${field.name}" name="${field.name}" value="${value}"
  placeholder="${field.placeholder ?? ''}" autocomplete="off"${field.required ? html` required` : ''}${marks}>`;
    return html`
<label for="${field.name}">${field.label}</label>
${field.hint ? html`<span class="hint" id="${field.name}-hint">${field.hint}</span>` : ''}
${fakeValue !== null ? fakeValueHint(field.name, fakeValue) : ''}
${control}
${fieldError(field.name, error?.message)}`;
  });
  return page(
    `Connect ${kind.label} to cnv`,
    html`${destinationHeading(kind, `Connect ${kind.label} to cnv`)}
${destinationIntro(hosted)}
${hosted.signedIn ? html`<div class="notice good">Signed in with ${kind.label}. Now tell cnv which account to send to.</div>` : ''}
${kind.fields.filter(chosen).map((field) => chosenBeforeSignIn(hosted, field))}
${formErrorsNotice(kind.fields.map((f) => f.name), errors)}
${hosted.signInOffered ? optionalSignIn(hosted) : ''}
<form method="post">
${fields}
<button type="submit">Connect ${kind.label}</button>
</form>
${backToDashboard(DASHBOARD_DESTINATIONS, false)}`,
    fakeValues ? { copyButtons: true } : {},
  );
}

/** A field's choices as a select, `value` selected; `marks` its ARIA attributes (fieldAttributes). */
function choiceSelect(name: string, choices: NonNullable<ConnectField['choices']>, value: string, marks: Html): Html {
  return html`<select id="${name}" name="${name}"${marks}>
${choices.map((choice) => html`<option value="${choice.value}"${choice.value === value ? html` selected` : ''}>${choice.label}</option>`)}
</select>`;
}

/**
 * The value the demo's local fake accepts in a field, beside it, marked as the fake's (shown only while this service
 * sends the platform's calls to that fake: HostedHandoff.fakeValues).
 */
function fakeValueHint(name: string, value: string): Html {
  return html`<div class="fake-value" id="${name}-fake"><span class="hint">Test value of the demo's local fake (not a real account):</span>
${copyable(`${name}-fake-value`, value)}</div>`;
}

/** A choice made before the sign-in, shown as made (the sign-in asked for what it needs), with the way to change it. */
function chosenBeforeSignIn(hosted: DestinationHandoff, field: ConnectField): Html {
  const value = hosted.signInChoices[field.name]!;
  const label = field.choices?.find((choice) => choice.value === value)?.label ?? value;
  return html`<p class="chosen">${field.label}: <strong>${label}</strong>, chosen before signing in. To change it, <a href="/handoffs/${hosted.handoff.token}?sign_in=again">sign in with ${hosted.destination.label} again</a>.</p>`;
}

/** The platform's optional sign-in, offered above the form that connects without it. */
function optionalSignIn(hosted: DestinationHandoff): Html {
  const kind = hosted.destination;
  const without = kind.fields.filter((field) => field.withoutSignIn).map((field) => field.label.toLowerCase());
  return html`<div class="notice">Two ways to connect: sign in with ${kind.label}, and cnv renews the authorization itself; or fill in the ${without.join(' and ')} below.
<p><a class="button secondary" href="/handoffs/${hosted.handoff.token}/authorize">Sign in with ${kind.label}</a></p></div>`;
}

/** After connecting a destination. */
export function destinationConnectedPage(kind: DestinationPlatform, summary: string): string {
  return page(
    `${kind.label} is connected to cnv`,
    html`${destinationHeading(kind, `${kind.label} is connected to cnv`)}
<div class="notice good" role="status">${summary} is connected. cnv sends it the conversions of every live flow that has a ${kind.label} action.</div>
<p>Next: test the connection on the dashboard's Destinations page, then add ${kind.label} to a flow. The dashboard shows the connection already, also in a tab that was open before.</p>
${backToDashboard(DASHBOARD_DESTINATIONS)}`,
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
  const known = (type: 'saas_signup' | 'conversion', label: string) => {
    const keys = webhook.known.filter((k) => k.type === type);
    return keys.length > 0
      ? html`${label}<ul>${keys.map((k) => html`<li><code>${k.key}</code>: <code>${k.url}</code></li>`)}</ul>`
      : '';
  };
  return html`<dt>Webhook URL of a signup</dt>
<dd><pre>${webhook.urlTemplate}</pre>
Replace <code>{trigger_key}</code> with the key of your signup flow's API trigger (1 to 64 characters of <code>A-Z a-z 0-9 _ -</code>).
${known('saas_signup', 'Signup keys your flows on this site already use:')}</dd>
<dt>Webhook URL of a later stage (a trial started, a first payment)</dt>
<dd><pre>${webhook.stageUrlTemplate}</pre>
Replace <code>{stage_key}</code> with the key of a later-stage flow (an API trigger of type <code>conversion</code>).
${known('conversion', 'Stage keys your flows on this site already use:')}</dd>`;
}

/** The first step of connecting the API trigger source: what will happen, and the button that does it. */
export function triggerSourceIntroPage(hosted: TriggerSourceHandoff): string {
  return page(
    'Connect your backend to cnv',
    html`<h1>Connect your backend to cnv</h1>
<p class="lead">Your server will report the signups of ${hosted.site.name} to cnv through a signed webhook (the API trigger), and cnv pairs each one with the ad click that brought it.</p>
<p>The site belongs to the cnv account <strong>${hosted.accountName}</strong>.</p>
<div class="notice">Continuing creates the webhook secret of this site and shows it <strong>once</strong>, on the next page only.
If the site already has a secret, it is replaced; the old one keeps working for 24 hours.</div>
<dl>${webhookUrls(hosted.webhook)}</dl>
<form method="post"><button type="submit">Create the webhook secret</button></form>
${backToDashboard(DASHBOARD_FLOWS, false)}`,
  );
}

/** The secret, shown this once, with the URL and the signing rules. */
export function triggerSourceConnectedPage(hosted: TriggerSourceHandoff, secret: string, rotated: boolean): string {
  return page(
    'Your webhook secret',
    html`<h1>Your backend can now report signups to cnv</h1>
<p class="lead">The webhook secret of the site <strong>${hosted.site.name}</strong>${hosted.site.domain ? html` (${hosted.site.domain})` : ''} in the cnv account <strong>${hosted.accountName}</strong>: put it in the backend of this website only. Another site has a secret and a webhook URL of its own.</p>
<div class="notice warn"><strong>Copy the secret now.</strong> It is shown only on this page and cannot be shown again.
Keep it on your server (for example in <code>CNV_WEBHOOK_SECRET</code>). Lost it? Make a new one with "Rotate secret" on the dashboard's Flows page.</div>
${rotated ? html`<div class="notice">This replaced the site's previous secret, which keeps verifying for 24 hours (the dashboard can end that at once).</div>` : ''}
<dl>
<dt>Site key</dt><dd><code>${hosted.site.site_key}</code></dd>
${webhookUrls(hosted.webhook)}
<dt>Webhook secret</dt><dd>${copyable('webhook-secret', secret)}</dd>
</dl>
${signingRules(hosted.webhook, hosted.site.site_key)}
${backToDashboard(DASHBOARD_FLOWS)}`,
    { copyButtons: true },
  );
}

/** A handoff that is already completed: nothing more can be done here. */
export function completedPage(hosted: HostedHandoff): string {
  const what =
    hosted.kind === 'destination'
      ? html`${hosted.destination.label} was connected to cnv through this link.`
      : html`The webhook secret of ${hosted.site.name} was created through this link and shown once. To get a new one, use "Rotate secret" on the dashboard's Flows page.`;
  return page(
    'Already completed',
    html`${hosted.kind === 'destination' ? destinationHeading(hosted.destination, 'This link was already used') : html`<h1>This link was already used</h1>`}
<div class="notice good">${what}</div>
<p>This link cannot change anything any more.</p>
${backToDashboard(hosted.kind === 'destination' ? DASHBOARD_DESTINATIONS : DASHBOARD_FLOWS)}`,
  );
}

/** An unknown (or malformed) link. */
/** A link left unused past its lifetime: nothing can be done with it any more. */
export function expiredPage(hosted: HostedHandoff): string {
  return page(
    'Link expired',
    html`${hosted.kind === 'destination' ? destinationHeading(hosted.destination, 'This link has expired') : html`<h1>This link has expired</h1>`}
<p>Connect links work for a day. Nothing was changed through this one, and it cannot change anything any more.</p>
<p>Start again for a fresh link: ${hosted.kind === 'destination' ? 'Connect on the dashboard\'s Destinations page' : 'Create the webhook secret on the dashboard\'s Flows page'}, or <code>POST /v1/handoffs</code>.</p>
${backToDashboard(hosted.kind === 'destination' ? DASHBOARD_DESTINATIONS : DASHBOARD_FLOWS)}`,
  );
}

export function notFoundPage(): string {
  return page(
    'Link not found',
    html`<h1>This link is not valid</h1>
<p>Check that you opened the whole link you were given. Each connect link is made by cnv when you (or a tool using your API key) start connecting something; start again from the dashboard for a fresh one.</p>
${backToDashboard('/')}`,
  );
}

/**
 * The OAuth callback reached in a browser that did not start the sign-in (no cookie for its state, or a wrong or stale
 * one). It names no handoff and no account, and offers no sign-in: someone may have sent this person a consent link so
 * that their grant lands on another account. Nothing was connected.
 */
export function otherBrowserPage(): string {
  return page(
    'Sign-in not started here',
    html`<h1>This sign-in was not started in this browser</h1>
<p>Nothing was connected, and cnv kept nothing from the platform. A sign-in only completes in the browser that opened the connect link and pressed its sign-in button, within an hour.</p>
<p>If you are connecting your own account, open your connect link again in this browser and sign in from there. If someone sent you this sign-in link, do not continue it: it would have connected your ad account to theirs.</p>
${backToDashboard('/')}`,
  );
}

/**
 * The page of a step that could not be done: the service's store cannot work now (503, with its sentence), or a fault
 * of the service (500). The link stays good: the same link works once the service does.
 */
export function unavailablePage(status: 500 | 503, message: string): string {
  return page(
    status === 503 ? 'Try again in a minute' : 'Something went wrong',
    html`<h1>${status === 503 ? 'The service cannot do this now' : 'Something went wrong'}</h1>
<div class="notice ${status === 503 ? 'warn' : 'bad'}" role="alert">${message}</div>
<p>This link still works: open it again in a minute.</p>`,
  );
}

/** What every page of a destination handoff says first: what cnv will do, and what it would replace. */
function destinationIntro(hosted: DestinationHandoff): Html {
  const kind = hosted.destination;
  return html`<p class="lead">cnv sends the conversions your flows capture to ${kind.label}, with the ad click that brought each one, so ${kind.label} can credit your campaigns.</p>
<p>This connects ${kind.label} to the cnv account <strong>${hosted.accountName}</strong>. Continue only if that is yours and you asked for this link.</p>
<div class="notice"><strong>What cnv will send:</strong> ${kind.consent}</div>
${elsewhereNotice(hosted)}${replaceWarning(hosted)}`;
}

/**
 * Said when this service sends the platform's calls somewhere else than the platform (a setting points them at the
 * demo's local fake, a test's or a proxy): real credentials would be refused there, and the refusal would read like
 * the platform's own.
 */
function elsewhereNotice(hosted: DestinationHandoff): Html | string {
  const elsewhere = hosted.apiElsewhere;
  if (!elsewhere) return '';
  const label = hosted.destination.label;
  if (hosted.fakeValues) {
    return html`<div class="notice warn" role="note"><strong>Not the real ${label}.</strong> This service sends its calls for ${label} to <code>${elsewhere.url}</code> (set by <code>${elsewhere.setting}</code>): <code>npm start</code>’s local fake ${label}, which takes only the demo’s test values, shown beside each field${hosted.destination.oauth && !hosted.authorized ? ' after the sign-in (the fake signs you in at once)' : ''}. To connect your own ${label} account, restart the service with <code>CNV_DEMO_PORT=off</code>.</div>
`;
  }
  return html`<div class="notice warn" role="note"><strong>Not the real ${label}.</strong> This service sends its calls for ${label} to <code>${elsewhere.url}</code> (set by <code>${elsewhere.setting}</code>), not to ${label}. While <code>npm start</code>’s demo runs, that is its local fake ${label}, which takes only the demo’s credentials: to connect your own ${label} account, restart the service with <code>CNV_DEMO_PORT=off</code>.</div>
`;
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
    `Connect ${kind.label} to cnv`,
    html`${destinationHeading(kind, `Connect ${kind.label} to cnv`)}
${destinationIntro(hosted)}
${problem ? html`<div class="notice warn">${problem}</div>` : ''}
<p>First sign in with ${kind.label} and allow cnv to send conversions. You come back here to pick the account.</p>
${signInStart(hosted)}
${backToDashboard(DASHBOARD_DESTINATIONS, false)}`,
  );
}

/**
 * The sign-in button; with the choices to make before it (ConnectField.beforeSignIn), a form whose submit starts the
 * sign-in with them (GET /handoffs/{token}/authorize?name=value), preselecting the last choice made.
 */
function signInStart(hosted: DestinationHandoff): Html {
  const kind = hosted.destination;
  const before = kind.fields.filter((field) => field.beforeSignIn && field.choices && !hosted.provided.includes(field.name));
  if (before.length === 0) return html`<p><a class="button" href="/handoffs/${hosted.handoff.token}/authorize">Sign in with ${kind.label}</a></p>`;
  const controls = before.map((field) => {
    const value = defaultChoice(hosted, field);
    return html`
<label for="${field.name}">${field.label}</label>
${field.hint ? html`<span class="hint" id="${field.name}-hint">${field.hint}</span>` : ''}
${choiceSelect(field.name, field.choices!, value, fieldAttributes(field.name, field.hint ? [`${field.name}-hint`] : [], false))}`;
  });
  return html`<form method="get" action="/handoffs/${hosted.handoff.token}/authorize">
${controls}
<button type="submit">Sign in with ${kind.label}</button>
</form>`;
}

/**
 * The platform refused the service's own OAuth client at the sign-in's callback: the service's setup is at fault, not
 * the person signing in, and trying again cannot help until the operator fixes it. Nothing was connected; the link
 * stays good (the handoff is still pending) for a sign-in once the operator has.
 */
export function oauthClientRefusedPage(hosted: DestinationHandoff, oauthError: string): string {
  const kind = hosted.destination;
  return page(
    `${kind.label} refused this service's setup`,
    html`${destinationHeading(kind, `${kind.label} cannot be connected now`)}
<div class="notice bad" role="alert"><p><strong>This cnv service's setup is at fault, not your sign-in.</strong> ${kind.label} refused the service's own OAuth client, so nothing was connected, and signing in again will not help until the service's operator fixes it.</p></div>
<p>Tell the operator of this cnv service: ${kind.label} answered <code>${oauthError || 'HTTP 401'}</code> to its client. They must set a working <code>${oauthClientSetting(kind.type, 'ID')}</code> and <code>${oauthClientSetting(kind.type, 'SECRET')}</code> (the client registered with ${kind.label}: its secret may have expired or been rotated, or the client deleted) and restart the service.</p>
<p>This link keeps working until it expires: open it again once they have, and sign in with ${kind.label}.</p>
${backToDashboard(DASHBOARD_DESTINATIONS)}`,
  );
}

/**
 * A newer connect link of the account for this platform was completed after this one was created: that connection
 * stays, and this link changes nothing (an older sign-in never replaces a newer one).
 */
export function supersededPage(hosted: DestinationHandoff): string {
  const kind = hosted.destination;
  return page(
    'A newer link was used',
    html`${destinationHeading(kind, 'A newer connect link was used')}
<div class="notice warn" role="alert">A newer connect link for ${kind.label} was completed after this one was created. The ${kind.label} account connected through it stays connected; nothing was changed here.</div>
<p>To connect another ${kind.label} account, open a new connect link (Reconnect on the dashboard's Destinations page).</p>
${backToDashboard(DASHBOARD_DESTINATIONS)}`,
  );
}

/** The service has no OAuth client for the platform: say which setting the operator must set. */
export function oauthNotConfiguredPage(hosted: DestinationHandoff, setting: string): string {
  const kind = hosted.destination;
  return page(
    `${kind.label} is not set up`,
    html`${destinationHeading(kind, `${kind.label} cannot be connected yet`)}
<div class="notice warn">This cnv service has no OAuth client for ${kind.label}. The operator must set <code>${setting}</code> (and its client secret) and restart the service; cnv's documentation explains it in docs/destinations/${kind.type}.md.</div>
${backToDashboard(DASHBOARD_DESTINATIONS)}`,
  );
}
