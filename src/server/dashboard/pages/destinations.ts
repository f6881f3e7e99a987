/** The Destinations page: connected ad platforms, their status, a connection test, and buttons that open a connect handoff. */
import type { DestinationRecord } from '../../api/destinations';
import { badge, html, layout, postButton, when, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';

/** A platform cnv can connect. */
export interface PlatformChoice {
  type: string;
  label: string;
}

/** The outcome of a connection test, shown on the destination it tested. */
export interface TestOutcome {
  destinationId: string;
  ok: boolean;
  message: string;
  error?: { code: string; message: string; hint?: string } | undefined;
  /** The Google Ads conversion action the test validated against. */
  conversionId?: string;
}

function connectButton(session: DashboardSession, type: string, label: string, className = ''): Html {
  return postButton(session, '/dashboard/destinations/connect', label, className, html`<input type="hidden" name="destination_type" value="${type}">`);
}

function account(record: DestinationRecord): Html {
  const entries = Object.entries(record.account).filter(([, v]) => v !== null && v !== undefined && v !== '');
  if (entries.length === 0) return html`<span class="muted">—</span>`;
  return html`${entries.map(([k, v]) => html`<div><span class="hint">${k.replace(/_/g, ' ')}:</span> <code>${typeof v === 'string' ? v : JSON.stringify(v)}</code></div>`)}`;
}

function testResult(outcome: TestOutcome | undefined): Html {
  if (!outcome) return html``;
  if (outcome.ok) return html`<div class="notice good" role="status">Connection works: ${outcome.message}</div>`;
  return html`<div class="notice bad" role="alert"><strong>Connection test failed:</strong> ${outcome.error?.message ?? outcome.message}
${outcome.error?.hint ? html`<br><strong>What to do:</strong> ${outcome.error.hint}` : ''}${outcome.error?.code ? html` <span class="hint">(${outcome.error.code})</span>` : ''}</div>`;
}

/**
 * The test button; Google Ads validates a whole upload, so its test names a conversion action: the one of a live
 * flow when there is one (offered in a list), or one the user types.
 */
function testForm(session: DashboardSession, record: DestinationRecord, outcome: TestOutcome | undefined, googleConversionIds: readonly string[]): Html {
  const action = `/dashboard/destinations/${record.id}/test`;
  if (record.type !== 'google-ads') return postButton(session, action, 'Test connection', 'secondary');
  const value = outcome?.conversionId ?? googleConversionIds[0] ?? '';
  const listId = `conversions-${record.id}`;
  return postButton(
    session,
    action,
    'Test connection',
    'secondary',
    html`<label for="test-${record.id}">Conversion action id <span class="hint">${googleConversionIds.length > 0 ? 'from your live flows, or another one' : "the numeric id of a conversion action of type 'Import from clicks'"}</span>
<input type="text" id="test-${record.id}" name="conversion_id" inputmode="numeric" pattern="[0-9]+" maxlength="30" required value="${value}" list="${listId}"></label>
<datalist id="${listId}">${googleConversionIds.map((id) => html`<option value="${id}">`)}</datalist>`,
  );
}

function destinationCard(session: DashboardSession, record: DestinationRecord, outcome: TestOutcome | undefined, googleConversionIds: readonly string[] = []): Html {
  const reauth = record.status === 'reauthorization_required';
  return html`<section class="card" id="${record.id}">
<h2>${record.label} ${badge(record.status)}</h2>
${reauth ? html`<div class="notice warn">The platform no longer accepts cnv's authorization: conversions wait until you reconnect.</div>` : ''}
<dl class="facts">
<dt>Account</dt><dd>${account(record)}</dd>
<dt>Connected</dt><dd>${when(record.connected_at)}</dd>
<dt>Id</dt><dd><code>${record.id}</code></dd>
</dl>
${testResult(outcome)}
<div class="actions">
${testForm(session, record, outcome, googleConversionIds)}
${connectButton(session, record.type, reauth ? 'Reconnect' : 'Reconnect (replace)', reauth ? '' : 'secondary')}
</div>
</section>`;
}

/** The Destinations page. */
export function destinationsPage(
  session: DashboardSession,
  records: readonly DestinationRecord[],
  platforms: readonly PlatformChoice[],
  outcome?: TestOutcome,
  notices: Notice[] = [],
  googleConversionIds: readonly string[] = [],
): string {
  const connected = new Set(records.map((r) => r.type));
  const available = platforms.filter((p) => !connected.has(p.type));
  return layout(
    { title: 'Destinations', nav: 'destinations', session, notices },
    html`<h1>Destinations</h1>
<p class="lead">The ad platforms conversions are sent to. Connecting opens the platform's hosted authorization page.</p>
${records.length === 0 ? html`<div class="card"><p class="muted">No destination connected yet.</p></div>` : ''}
${records.map((r) => destinationCard(session, r, outcome?.destinationId === r.id ? outcome : undefined, googleConversionIds))}
${
  available.length > 0
    ? html`<section class="card"><h2>Connect a destination</h2>
<p class="hint">Opens a connect handoff and takes you to its hosted page; come back here when it says connected.</p>
<div class="actions">${available.map((p) => connectButton(session, p.type, `Connect ${p.label}`))}</div></section>`
    : ''
}
`,
  );
}
