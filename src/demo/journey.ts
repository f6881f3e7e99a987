/**
 * The journey of one demo signup as a list of steps: ad click, signup intent, backend report, pairing, and each
 * destination's delivery. Pure: built from the signup, the events cnv shows for it, and the fake's received uploads.
 */
import type { EventFacts } from './event-facts';
import { isSettled } from './event-facts';
import type { ReceivedUpload } from './uploads';
import type { Signup } from './signups';

export type StepState = 'done' | 'waiting' | 'failed' | 'skipped';

/** One step of the journey. `facts` are label/value pairs; `upload` is what the fake destination received. */
export interface JourneyStep {
  key: string;
  title: string;
  state: StepState;
  summary: string;
  facts: Array<[string, string]>;
  upload?: ReceivedUpload;
}

export interface Journey {
  steps: JourneyStep[];
  /** True when nothing more will change: the page stops polling. */
  final: boolean;
}

export interface JourneyInput {
  signup: Signup;
  /** The events of this signup (customer_event_id = the user's id), as read through GET /v1/events. */
  events: EventFacts[];
  /** Why the events could not be read, if they could not. */
  eventsError: string | null;
  /** The uploads the fake destination received for an event's action. */
  uploadsOf(event: EventFacts): ReceivedUpload[];
}

const DESTINATION_LABELS: Record<string, string> = { 'google-ads': 'Google Ads (local fake)' };

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
        'This browser had no ad click stored: the visit did not start from an ad link. Google Ads can then only match on hashed identifiers. Start from “Simulate an ad click” to see the full journey.',
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
    summary: 'The loader read the click id from the landing URL as its first act and kept it in a first-party cookie.',
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

function deliveryStep(event: EventFacts, index: number, uploads: ReceivedUpload[]): JourneyStep {
  const action = event.actions[index]!;
  const label = DESTINATION_LABELS[action.destination] ?? action.destination;
  const base = { key: `delivery:${event.id}:${index}`, title: `Delivered to ${label}` };
  // One order id per event; several actions of one event are told apart by their conversion action.
  const conversionAction = typeof action.request?.conversion_action === 'string' ? action.request.conversion_action : null;
  const upload = uploads.filter((u) => conversionAction === null || u.conversion.conversionAction === conversionAction).at(-1);
  const facts: Array<[string, string]> = [['status', action.status]];
  if (action.status === 'delivered') {
    return {
      ...base,
      state: 'done',
      summary: upload
        ? 'The fake Google Ads API received this click conversion upload (identifiers are SHA-256 hashes; nothing raw leaves cnv).'
        : 'Delivered.',
      facts,
      ...(upload ? { upload } : {}),
    };
  }
  if (action.status === 'failed') {
    if (action.error) facts.push(['error', action.error.code ? `${action.error.code}: ${action.error.message}` : action.error.message]);
    return { ...base, title: `Delivery to ${label} failed`, state: 'failed', summary: 'The destination refused the upload for good.', facts, ...(upload ? { upload } : {}) };
  }
  if (action.error) facts.push(['last error', action.error.message]);
  return { ...base, title: `Delivering to ${label}`, state: 'waiting', summary: 'Queued in the outbox; the delivery worker sends it (and retries on failures).', facts };
}

/** The steps of a signup's journey and whether it is over. */
export function buildJourney(input: JourneyInput): Journey {
  const { signup, events } = input;
  const first = events[0];
  const steps: JourneyStep[] = [clickStep(first), intentStep(signup), reportStep(signup)];
  const report = signup.report;
  if (signup.reportError) return { steps, final: true };
  if (!report) {
    steps.push(pairingStep(undefined, 'Follows once the backend’s report has arrived.'));
    steps.push({ key: 'delivery', title: 'Delivery to Google Ads', state: 'waiting', summary: 'Follows once the event exists.', facts: [] });
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
    steps.push({ key: 'delivery', title: 'Delivery to Google Ads', state: 'waiting', summary: 'Follows once the event exists.', facts: [] });
    return { steps, final: false };
  }
  for (const event of events) {
    steps.push(pairingStep(event, ''));
    event.actions.forEach((_, i) => steps.push(deliveryStep(event, i, input.uploadsOf(event))));
  }
  const final = events.length >= expected && events.every(isSettled);
  return { steps, final };
}
