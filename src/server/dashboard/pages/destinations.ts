/**
 * The Destinations page: the connected ad platforms with their logos, status and a connection test, and a button per
 * platform that opens its hosted connect page. The list refreshes itself, so a connection completed on a hosted page
 * (in this tab or another, or by an agent's handoff) shows without a reload.
 */
import type { DestinationRecord } from '../../api/destinations';
import { LIMITED_DATA_USE, platformLogo } from '../../destinations';
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
  /** When ok but something will still fail (a flow action naming a goal the account does not have). */
  warning?: string | undefined;
  /** The Google Ads conversion action the test validated against. */
  conversionId?: string;
}

/** The failed deliveries per destination type (dashboard/sql.ts failedDeliveriesByDestination); `capped`: at least these. */
export interface FailedDeliveries {
  counts: ReadonlyMap<string, number>;
  capped: boolean;
}

const NO_FAILURES: FailedDeliveries = { counts: new Map(), capped: false };

/** Path of the live list's fragment. */
export const DESTINATIONS_FRAGMENT_PATH = '/dashboard/destinations/list';

function connectButton(session: DashboardSession, type: string, label: string, className = '', text = label): Html {
  return postButton(session, '/dashboard/destinations/connect', text, className, html`<input type="hidden" name="destination_type" value="${type}">`);
}

/** Google's `api` setting in words (which of Google's APIs cnv sends through). */
const GOOGLE_API_WORDS: Readonly<Record<string, string>> = { data_manager: 'Data Manager API', google_ads_api: 'Google Ads API' };

function account(record: DestinationRecord): Html {
  const entries = Object.entries(record.account).filter(([, v]) => v !== null && v !== undefined && v !== '');
  if (entries.length === 0) return html`<span class="muted">—</span>`;
  return html`${entries.map(([k, v]) =>
    k === 'api' && typeof v === 'string' && Object.hasOwn(GOOGLE_API_WORDS, v)
      ? html`<div><span class="hint">sends through:</span> ${GOOGLE_API_WORDS[v]}</div>`
      : k === LIMITED_DATA_USE && typeof v === 'boolean'
        ? html`<div><span class="hint">Limited Data Use:</span> ${v ? 'on' : 'off'}</div>`
        : html`<div><span class="hint">${k.replace(/_/g, ' ')}:</span> <code>${typeof v === 'string' ? v : JSON.stringify(v)}</code></div>`,
  )}`;
}

export function testResult(outcome: TestOutcome | undefined, label: string): Html {
  if (!outcome) return html``;
  if (outcome.ok && outcome.warning) {
    return html`<div class="notice warn" role="alert"><strong>${label}: the connection works, but a flow will fail.</strong> ${outcome.message}
<br><a href="/dashboard/flows">Open the flows</a></div>`;
  }
  if (outcome.ok) return html`<div class="notice good" role="status">${label}: the connection works. ${outcome.message}</div>`;
  return html`<div class="notice bad" role="alert"><strong>${label}: the connection test failed.</strong> ${outcome.error?.message ?? outcome.message}
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
    html`<label for="test-${record.id}">Conversion action id (required: Google checks a test upload against it) <span class="hint">${googleConversionIds.length > 0 ? 'from your live flows, or another one' : "the numeric id of a conversion action of type 'Import from clicks'"}</span>
<input type="text" id="test-${record.id}" name="conversion_id" inputmode="numeric" pattern="[0-9]+" maxlength="30" required value="${value}" list="${listId}"></label>
<datalist id="${listId}">${googleConversionIds.map((id) => html`<option value="${id}">`)}</datalist>`,
  );
}

/**
 * The destination's failed deliveries, if any, with a button that sends them all again (POST /v1/destinations/{id}/redeliver):
 * after fixing what the platform refused, one press instead of one per event.
 */
function failedNotice(session: DashboardSession, record: DestinationRecord, failed: FailedDeliveries): Html {
  const count = failed.counts.get(record.type) ?? 0;
  if (count === 0) return html``;
  const one = count === 1 && !failed.capped;
  const amount = `${failed.capped ? 'At least ' : ''}${count.toLocaleString('en')} ${one ? 'delivery' : 'deliveries'}`;
  const again = one
    ? `Send it again: it goes with the same id, so ${record.label} counts it once even if it has it already.`
    : `Send them again: they go with the same ids, so ${record.label} counts each once even if it has it already.`;
  return html`<div class="notice bad failed-deliveries"><p><strong>${amount} to ${record.label} failed.</strong> <a href="/dashboard/events?status=failed">See the failed events</a> for what ${record.label} said.
Fixed the cause (a permission, a conversion action missing in the ad account)? ${again}</p>
${postButton(session, `/dashboard/destinations/${record.id}/redeliver`, one ? 'Send it again' : 'Send them again', 'small')}</div>`;
}

function destinationCard(
  session: DashboardSession,
  record: DestinationRecord,
  outcome: TestOutcome | undefined,
  googleConversionIds: readonly string[],
  failed: FailedDeliveries,
): Html {
  const reauth = record.status === 'reauthorization_required';
  return html`<section class="card" id="${record.id}" aria-labelledby="title-${record.id}">
<div class="brandline">${platformLogo(record.type, record.label, 32)}<h2 id="title-${record.id}">${record.label} ${badge(record.status)}</h2></div>
${reauth ? html`<div class="notice warn">${record.label} no longer accepts cnv's authorization: conversions wait (nothing is lost) until you reconnect.</div>` : ''}
${record.problem ? html`<div class="notice bad service-problem" role="status"><p><strong>Conversions to ${record.label} wait: this cnv service's setup is at fault, not your connection.</strong> ${record.problem.message}</p>${record.problem.hint ? html`<p>${record.problem.hint}</p>` : ''}</div>` : ''}
${failedNotice(session, record, failed)}
<dl class="facts">
<dt>Account</dt><dd>${account(record)}</dd>
<dt>Connected</dt><dd>${when(record.connected_at)}</dd>
<dt>Id</dt><dd><code>${record.id}</code></dd>
</dl>
${record.type === 'google-ads' ? html`<div class="test-form">${testForm(session, record, outcome, googleConversionIds)}</div>` : ''}
<div class="actions">
${record.type === 'google-ads' ? '' : testForm(session, record, outcome, googleConversionIds)}
${connectButton(session, record.type, record.label, reauth ? '' : 'secondary', `Reconnect ${record.label}`)}
</div>
</section>`;
}

/** The list of connections and the connect buttons: the page's live section and its fragment. */
export function destinationsSection(
  session: DashboardSession,
  records: readonly DestinationRecord[],
  platforms: readonly PlatformChoice[],
  googleConversionIds: readonly string[] = [],
  outcome?: TestOutcome,
  failed: FailedDeliveries = NO_FAILURES,
): Html {
  const connected = new Set(records.map((r) => r.type));
  const available = platforms.filter((p) => !connected.has(p.type));
  // The line a screen reader hears when the list changes (a connection made in another tab, one refused).
  const summary = `Ad platforms: ${records.map((r) => `${r.label} ${r.status.replace(/_/g, ' ')}`).join('; ')}.`;
  return html`<div id="destinations" data-live="${DESTINATIONS_FRAGMENT_PATH}" data-live-every="4">
${records.length === 0 ? html`<div class="card"><p class="muted" data-live-summary>No ad platform connected yet: pick one below.</p></div>` : html`<p class="visually-hidden" data-live-summary>${summary}</p>`}
${records.map((r) => destinationCard(session, r, outcome?.destinationId === r.id ? outcome : undefined, googleConversionIds, failed))}
${
  available.length > 0
    ? html`<section class="card" aria-labelledby="connect-title"><h2 id="connect-title">${records.length === 0 ? 'Connect an ad platform' : 'Connect another ad platform'}</h2>
<p class="hint">Opens cnv's connect page for the platform (its sign-in, then the account to send to). This list shows the connection as soon as it is made.</p>
<ul class="connect-list">${available.map(
        (p) => html`<li>${platformLogo(p.type, p.label, 28)}<span>${p.label}</span>${connectButton(session, p.type, p.label, 'small', `Connect ${p.label}`)}</li>`,
      )}</ul></section>`
    : ''
}
</div>`;
}

/** The Destinations page. */
export function destinationsPage(
  session: DashboardSession,
  records: readonly DestinationRecord[],
  platforms: readonly PlatformChoice[],
  outcome?: TestOutcome,
  notices: Notice[] = [],
  googleConversionIds: readonly string[] = [],
  failed: FailedDeliveries = NO_FAILURES,
): string {
  const tested = outcome ? records.find((r) => r.id === outcome.destinationId) : undefined;
  return layout(
    { title: 'Destinations', nav: 'destinations', session, notices },
    html`<h1>Destinations</h1>
<p class="lead">The ad platforms cnv sends your conversions to.</p>
${tested ? testResult(outcome, tested.label) : ''}
${destinationsSection(session, records, platforms, googleConversionIds, outcome, failed)}`,
  );
}
