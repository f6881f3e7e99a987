/**
 * The journey of one demo signup as a list of steps: ad click, signup intent, backend report, pairing, and the
 * deliveries to the ad platforms. Pure: built from the signup, the events cnv shows for it, and the requests the fake
 * platforms received.
 */
import type { AdjustmentFacts, EventFacts } from './event-facts';
import { isSettled } from './event-facts';
import type { ReceivedRequest, RequestFinder } from './platform-requests';
import { paidEventId, type Signup } from './signups';
import { moneyOf } from '../protocol/money';

export type StepState = 'done' | 'waiting' | 'failed' | 'skipped';

/** One destination's delivery of an event: its status in cnv, and the request its fake received. */
export interface Delivery {
  /** The destination type, e.g. `google-ads`. */
  destination: string;
  label: string;
  state: StepState;
  /** The action's status as GET /v1/events shows it. */
  status: string;
  summary: string;
  /** What in the request carries the ad click, in a sentence. */
  clickNote: string | null;
  facts: Array<[string, string]>;
  /** The last request the fake received for this event (a retry shows the latest). */
  request?: ReceivedRequest;
  /** How many requests the fake received for it (more than one after retries). */
  requestCount: number;
}

/** One step of the journey. `facts` are label/value pairs; `deliveries` are the per-platform results of an event. */
export interface JourneyStep {
  key: string;
  title: string;
  state: StepState;
  summary: string;
  facts: Array<[string, string]>;
  deliveries?: Delivery[];
}

export interface Journey {
  steps: JourneyStep[];
  /** True when nothing more will change: the page stops polling. */
  final: boolean;
}

export interface JourneyInput {
  signup: Signup;
  /**
   * The events of this signup (customer_event_id = the user's id) and of its paid-plan stage (`paidEventId`), as read
   * through GET /v1/events.
   */
  events: EventFacts[];
  /** Why the events could not be read, if they could not. */
  eventsError: string | null;
  /** The requests a destination's fake received for an event. */
  requestsOf: RequestFinder;
}

/** The platforms the demo delivers to, in the order its flow lists them. */
export const PLATFORM_LABELS: Readonly<Record<string, string>> = {
  'google-ads': 'Google Ads',
  meta: 'Meta',
  'microsoft-ads': 'Microsoft Advertising',
  linkedin: 'LinkedIn',
  reddit: 'Reddit',
  tiktok: 'TikTok',
};

/** Where each platform's request carries the click, when the visit had that platform's click id. */
const CLICK_NOTES: Readonly<Record<string, { clickId: string; note: string }>> = {
  'google-ads': { clickId: 'gclid', note: 'Data Manager API events:ingest: the gclid travels in adIdentifiers.gclid.' },
  meta: { clickId: 'fbclid', note: 'Conversions API: user_data.fbc is built from the fbclid (fb.1.<click time>.<fbclid>).' },
  'microsoft-ads': { clickId: 'msclkid', note: 'ApplyOfflineConversions: the msclkid travels as MicrosoftClickId.' },
  linkedin: { clickId: 'li_fat_id', note: 'Conversions API: the li_fat_id is a LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID user id.' },
  reddit: { clickId: 'rdt_cid', note: 'Conversions API v3: the rdt_cid travels as the event’s click_id.' },
  tiktok: { clickId: 'ttclid', note: 'Events API 2.0: the ttclid travels as user.ttclid.' },
};

/** How a platform is named on the page. */
export function platformLabel(destination: string): string {
  return PLATFORM_LABELS[destination] ?? destination;
}

const MATCH_EXPLAINED: Record<string, string> = {
  high: 'high: the ad click id travels with the conversion',
  medium: 'medium: paired with the browser, but the visit had no ad click id',
  low: 'low: identity fields only, no click id',
};

function short(token: string): string {
  return token.length > 10 ? `${token.slice(0, 6)}…${token.slice(-4)}` : token;
}

function clickStep(event: EventFacts | undefined): JourneyStep {
  const base = { key: 'click', title: 'Ad click captured' };
  if (!event) return { ...base, state: 'waiting', summary: 'Known once cnv has paired the report with the loader’s snapshot.', facts: [] };
  const ids = Object.entries(event.clickIds);
  if (ids.length === 0) {
    return {
      ...base,
      state: 'skipped',
      summary:
        'This browser had no ad click stored: the visit did not start from an ad link. The ad platforms can then only match on hashed identifiers. Start from “Simulate an ad click” to see the full journey.',
      facts: [],
    };
  }
  const facts: Array<[string, string]> = ids.map(([k, v]) => [k, v]);
  for (const [k, v] of Object.entries(event.utm)) facts.push([k, v]);
  if (event.landingPageUrl) facts.push(['landing page', event.landingPageUrl]);
  if (event.touchCapturedAt) facts.push(['captured at', event.touchCapturedAt]);
  return {
    ...base,
    state: 'done',
    summary: 'The loader read the click ids from the landing URL as its first act and kept them in a first-party cookie.',
    facts,
  };
}

function intentStep(signup: Signup): JourneyStep {
  const base = { key: 'intent', title: 'Signup intent: correlation token' };
  if (signup.correlationToken) {
    return {
      ...base,
      state: 'done',
      summary:
        'In the submit event the loader wrote the correlation cookie and sent cnv a snapshot of the click under it; your form POST carried the cookie to the store’s backend.',
      facts: [['token', short(signup.correlationToken)]],
    };
  }
  return {
    ...base,
    state: 'failed',
    summary:
      'Your signup request carried no correlation cookie: the loader did not run on the pricing page (blocked, or the service was unreachable).',
    facts: [],
  };
}

function reportStep(signup: Signup): JourneyStep {
  const base = { key: 'report', title: 'Backend reported the signup' };
  const report = signup.report;
  if (signup.reportError) {
    return { ...base, state: 'failed', summary: `The report could not be made: ${signup.reportError}`, facts: [['customer_event_id', signup.id]] };
  }
  if (!report) {
    return {
      ...base,
      title: 'Backend reporting the signup',
      state: 'waiting',
      summary: 'The store’s backend answered you first and is now reporting the signup through the cnv Node client.',
      facts: [['customer_event_id', signup.id]],
    };
  }
  if (report.ok) {
    return {
      ...base,
      state: 'done',
      summary: 'The store’s backend reported the new user through the cnv Node client: a webhook request signed with its secret.',
      facts: [
        ['customer_event_id', signup.id],
        ['status', report.response.status],
        ['promoted_count', String(report.response.promoted_count)],
        ['attempts', String(report.attempts)],
      ],
    };
  }
  return {
    ...base,
    state: 'failed',
    summary: report.sent ? `The report failed: ${report.message}` : `Nothing was sent: ${report.message}`,
    facts: [['customer_event_id', signup.id]],
  };
}

function pairingStep(event: EventFacts | undefined, waitingFor: string): JourneyStep {
  const base = { key: `pairing${event ? `:${event.id}` : ''}`, title: 'cnv paired the report with the click' };
  if (!event) return { ...base, state: 'waiting', summary: waitingFor, facts: [] };
  const facts: Array<[string, string]> = [['event', event.id]];
  if (event.flowName) facts.push(['flow', event.flowName]);
  if (event.matchQuality) facts.push(['match quality', MATCH_EXPLAINED[event.matchQuality] ?? event.matchQuality]);
  if (event.status) facts.push(['event status', event.status]);
  if (event.matchQuality === null) {
    return { ...base, state: 'waiting', summary: 'Waiting for the loader’s snapshot (it may arrive a moment after the report).', facts };
  }
  return { ...base, state: 'done', summary: 'The report’s token found the loader’s snapshot: one event per live flow.', facts };
}

function delivery(event: EventFacts, index: number, requestsOf: RequestFinder): Delivery {
  const action = event.actions[index]!;
  const label = platformLabel(action.destination);
  const requests = requestsOf(action.destination, event);
  const request = requests.at(-1);
  const click = CLICK_NOTES[action.destination];
  const base = {
    destination: action.destination,
    label,
    status: action.status,
    clickNote: click && event.clickIds[click.clickId] ? click.note : null,
    requestCount: requests.length,
    ...(request ? { request } : {}),
  };
  if (action.status === 'delivered') {
    return {
      ...base,
      state: 'done',
      summary: request ? `The ${label} fake accepted this request.` : 'Delivered.',
      facts: [],
    };
  }
  if (action.status === 'failed') {
    const facts: Array<[string, string]> = [];
    if (action.error) facts.push(['error', action.error.code ? `${action.error.code}: ${action.error.message}` : action.error.message]);
    return { ...base, state: 'failed', summary: `${label} refused the conversion for good.`, facts };
  }
  const facts: Array<[string, string]> = action.error ? [['last error', action.error.message]] : [];
  return { ...base, state: 'waiting', summary: 'Queued in the outbox; the delivery worker sends it (and retries on failures).', facts };
}

function deliveriesStep(event: EventFacts, requestsOf: RequestFinder): JourneyStep {
  const deliveries = event.actions.map((_, i) => delivery(event, i, requestsOf));
  const delivered = deliveries.filter((d) => d.state === 'done').length;
  const failed = deliveries.filter((d) => d.state === 'failed').length;
  const waiting = deliveries.length - delivered - failed;
  const platforms = deliveries.length === 1 ? '1 ad platform' : `${deliveries.length} ad platforms`;
  const base = { key: `deliveries:${event.id}`, facts: [] as Array<[string, string]>, deliveries };
  if (waiting > 0) {
    return { ...base, title: `Delivering to ${platforms}`, state: 'waiting', summary: `${delivered} of ${deliveries.length} delivered so far.` };
  }
  if (failed > 0) {
    return { ...base, title: `Delivered to ${delivered} of ${platforms}`, state: 'failed', summary: `${failed} refused the conversion; see why below.` };
  }
  return {
    ...base,
    title: `Delivered to ${platforms}`,
    state: 'done',
    summary: 'Each local fake received the request below, exactly as the platform documents it; hashed identifiers only, nothing raw leaves cnv.',
  };
}

function pendingDeliveries(): JourneyStep {
  return { key: 'deliveries', title: 'Delivery to the ad platforms', state: 'waiting', summary: 'Follows once the event exists.', facts: [] };
}

/** The report of the upgrade: the later stage, sent with the customer id only. */
function upgradeStep(signup: Signup): JourneyStep {
  const upgrade = signup.upgrade!;
  const base = { key: 'upgrade', title: 'Backend reported the upgrade: a later stage' };
  const facts: Array<[string, string]> = [['customer_event_id', upgrade.id], ['customer_id', signup.id]];
  if (upgrade.error) return { ...base, state: 'failed', summary: `The report could not be made: ${upgrade.error}`, facts };
  const result = upgrade.result;
  if (!result) {
    return { ...base, title: 'Backend reporting the upgrade', state: 'waiting', summary: 'The store’s backend is reporting the payment through reportConversion.', facts };
  }
  if (!result.ok) return { ...base, state: 'failed', summary: result.sent ? `The report failed: ${result.message}` : `Nothing was sent: ${result.message}`, facts };
  const match = result.response.match;
  facts.push(['match', match === 'identity' ? 'identity: the click of the signup with this customer_id' : match]);
  return {
    ...base,
    state: 'done',
    summary:
      'The backend reported the payment with reportConversion: no cookie, just the customer id (as a billing webhook would). cnv found the ad click through the signup of the same customer.',
    facts,
  };
}

/** The report of the refund: a retraction of the paid-plan conversion. */
function refundStep(signup: Signup): JourneyStep {
  const refund = signup.refund!;
  const base = { key: 'refund', title: 'Backend reported the refund: a retraction' };
  const facts: Array<[string, string]> = [['adjustment_id', refund.id], ['customer_event_id', signup.upgrade!.id], ['type', 'retract']];
  if (refund.error) return { ...base, state: 'failed', summary: `The report could not be made: ${refund.error}`, facts };
  const result = refund.result;
  if (!result) return { ...base, title: 'Backend reporting the refund', state: 'waiting', summary: 'The store’s backend is reporting the refund through adjustConversion.', facts };
  if (!result.ok) return { ...base, state: 'failed', summary: result.sent ? `The report failed: ${result.message}` : `Nothing was sent: ${result.message}`, facts };
  return { ...base, state: 'done', summary: 'The backend took the payment back with adjustConversion: cnv passes the retraction on, after the original delivery, to each platform that has a way to take a conversion back (what each did is below).', facts };
}

const ADJUSTMENT_STATE: Record<string, StepState> = { adjusted: 'done', unsupported: 'skipped', failed: 'failed', queued: 'waiting' };

/** One platform's result of an adjustment, with the request its fake received (where the platform has the operation). */
function adjustmentDelivery(event: EventFacts, adjustment: AdjustmentFacts, index: number, requestsOf: RequestFinder): Delivery {
  const result = adjustment.results[index]!;
  const label = platformLabel(result.destination);
  const requests = result.status === 'adjusted' ? requestsOf(result.destination, event, 'adjustment') : [];
  const request = requests.at(-1);
  const state = ADJUSTMENT_STATE[result.status] ?? 'waiting';
  const summary =
    state === 'done'
      ? `${label} took the conversion back.`
      : state === 'skipped'
        ? `Not sent: ${result.reason ?? `${label} has no such operation.`}`
        : state === 'failed'
          ? `The retraction failed: ${result.reason ?? 'no reason given.'}`
          : 'Queued behind the original delivery; the delivery worker sends it.';
  return { destination: result.destination, label, state, status: result.status, summary, clickNote: null, facts: [], requestCount: requests.length, ...(request ? { request } : {}) };
}

function adjustmentStep(event: EventFacts, adjustment: AdjustmentFacts, requestsOf: RequestFinder): JourneyStep {
  const deliveries = adjustment.results.map((_, i) => adjustmentDelivery(event, adjustment, i, requestsOf));
  const waiting = deliveries.filter((d) => d.state === 'waiting').length;
  const adjusted = deliveries.filter((d) => d.state === 'done').length;
  const unsupported = deliveries.filter((d) => d.state === 'skipped').length;
  const failed = deliveries.filter((d) => d.state === 'failed').length;
  const what = adjustment.type === 'retract' ? 'Refund' : `Restatement to ${moneyOf(adjustment.value, adjustment.currency) ?? 'a new value'}`;
  const counts = `${adjusted} took it back, ${unsupported} have no such operation${failed > 0 ? `, ${failed} failed` : ''}.`;
  return {
    key: `adjustment:${adjustment.adjustmentId}`,
    title: waiting > 0 ? `${what} on its way to the ad platforms` : `${what} applied where the platforms allow it`,
    state: waiting > 0 ? 'waiting' : failed > 0 ? 'failed' : 'done',
    summary: waiting > 0 ? `${deliveries.length - waiting} of ${deliveries.length} settled so far.` : counts,
    facts: [],
    deliveries,
  };
}

/** The steps of the paid plan (upgrade, its deliveries, the refund and its adjustments) and whether they are over. */
function planSteps(input: JourneyInput, stage: EventFacts | undefined): { steps: JourneyStep[]; final: boolean } {
  const { signup } = input;
  if (!signup.upgrade) return { steps: [], final: true };
  const steps = [upgradeStep(signup)];
  const result = signup.upgrade.result;
  if (signup.upgrade.error || (result && !result.ok)) return { steps, final: true };
  if (!stage) {
    steps.push({ key: 'deliveries:stage', title: 'Delivery of the paid plan', state: 'waiting', summary: 'Follows once the event exists.', facts: [] });
    return { steps, final: false };
  }
  const delivered = deliveriesStep(stage, input.requestsOf);
  const worth = moneyOf(stage.value, stage.currency);
  steps.push({ ...delivered, title: `${delivered.title}: the paid plan${worth ? `, ${worth}` : ''}` });
  let final = isSettled(stage);
  if (signup.refund) {
    steps.push(refundStep(signup));
    const refund = signup.refund;
    const adjustment = stage.adjustments.find((a) => a.adjustmentId === refund.id);
    if (adjustment) steps.push(adjustmentStep(stage, adjustment, input.requestsOf));
    const over = refund.error !== null || (refund.result !== null && !refund.result.ok);
    final = final && (over || (adjustment !== undefined && adjustment.results.every((r) => r.status !== 'queued')));
  }
  return { steps, final };
}

/** The steps of a signup's journey and whether it is over. */
export function buildJourney(input: JourneyInput): Journey {
  const { signup } = input;
  const events = input.events.filter((e) => e.customerEventId !== paidEventId(signup.id));
  const stage = input.events.find((e) => e.customerEventId === paidEventId(signup.id));
  const first = events[0];
  const steps: JourneyStep[] = [clickStep(first), intentStep(signup), reportStep(signup)];
  const report = signup.report;
  if (signup.reportError) return { steps, final: true };
  if (!report) {
    steps.push(pairingStep(undefined, 'Follows once the backend’s report has arrived.'));
    steps.push(pendingDeliveries());
    return { steps, final: false };
  }
  if (!report.ok) return { steps, final: true };
  const expected = report.response.promoted_count;
  if (expected === 0) {
    steps.push({
      key: 'pairing',
      title: 'No live flow for this trigger',
      state: 'failed',
      summary: 'cnv kept the report, but no published flow has this trigger key, so nothing is delivered.',
      facts: [['status', report.response.status]],
    });
    return { steps, final: true };
  }
  if (events.length === 0) {
    const waitingFor = input.eventsError ? `Could not read events: ${input.eventsError}` : 'Waiting for the event to show in GET /v1/events.';
    steps.push(pairingStep(undefined, waitingFor));
    steps.push(pendingDeliveries());
    return { steps, final: false };
  }
  for (const event of events) {
    steps.push(pairingStep(event, ''));
    steps.push(deliveriesStep(event, input.requestsOf));
  }
  const plan = planSteps(input, stage);
  steps.push(...plan.steps);
  const final = events.length >= expected && events.every(isSettled) && plan.final;
  return { steps, final };
}
