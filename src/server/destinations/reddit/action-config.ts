/**
 * A Reddit flow action's `config`: which event cnv reports (`event_name`, optional): one of Reddit's v3 tracking
 * types (SIGN_UP, LEAD, PURCHASE, …), or any other name, sent as a CUSTOM event with that name. Facts: ./index.ts.
 */
import type { EventTrigger, Problem } from '../destination';

/** Reddit's v3 standard tracking types (CUSTOM is chosen by giving any other name). */
export const TRACKING_TYPES = ['PAGE_VISIT', 'VIEW_CONTENT', 'SEARCH', 'ADD_TO_CART', 'ADD_TO_WISHLIST', 'PURCHASE', 'LEAD', 'SIGN_UP'] as const;
export type TrackingType = (typeof TRACKING_TYPES)[number];

/** Tracking types that take no value or currency (Reddit's “About event metadata”). */
export const WITHOUT_VALUE: ReadonlySet<string> = new Set(['PAGE_VISIT', 'VIEW_CONTENT', 'SEARCH']);

/** Longest custom event name Reddit takes. */
export const MAX_CUSTOM_EVENT_NAME_LENGTH = 64;

/**
 * The event a trigger sends when the action names none: a signup is SIGN_UP, a form a LEAD, and a later stage of a
 * customer a PURCHASE when it carries a value (a first payment, a renewal), else a LEAD (a trial, a qualified lead).
 */
export const DEFAULT_EVENT_NAME: Readonly<Record<EventTrigger, TrackingType>> = {
  saas_signup: 'SIGN_UP',
  conversion: 'LEAD',
  form_submission: 'LEAD',
};

/** The default event of a later stage that carries a value. */
export const VALUED_CONVERSION_EVENT: TrackingType = 'PURCHASE';

/** `type` of an event as Reddit takes it. */
export type RedditEventType = { tracking_type: TrackingType } | { tracking_type: 'CUSTOM'; custom_event_name: string };

const squash = (name: string) => name.toLowerCase().replace(/[_\s-]/g, '');

/** Problems of a Reddit action `config` (`param` is its path); an empty list when cnv can send it. */
export function checkRedditAction(config: Record<string, unknown>, param: string, _trigger: EventTrigger): Problem[] {
  const problems: Problem[] = [];
  for (const key of Object.keys(config)) {
    if (key !== 'event_name') {
      problems.push({ param: `${param}.${key}`, message: `Reddit actions have no setting '${key}'; the only one is event_name (optional).` });
    }
  }
  const name = config.event_name;
  if (name === undefined) return problems;
  const where = `${param}.event_name`;
  if (typeof name !== 'string' || name === '' || name.trim() !== name) {
    problems.push({ param: where, message: 'event_name must be a non-empty string without surrounding spaces, e.g. "SIGN_UP", "LEAD" or a custom name.' });
    return problems;
  }
  if ((TRACKING_TYPES as readonly string[]).includes(name)) return problems;
  const standard = TRACKING_TYPES.find((t) => squash(t) === squash(name));
  if (standard) {
    problems.push({ param: where, message: `'${name}' is Reddit's standard event ${standard}: write '${standard}' (Reddit's v3 spelling), or it would be a custom event.` });
  } else if (squash(name) === 'custom') {
    problems.push({ param: where, message: 'For a custom event, write its own name (e.g. "Trial started"), not CUSTOM.' });
  } else if (name.length > MAX_CUSTOM_EVENT_NAME_LENGTH) {
    problems.push({ param: where, message: `Reddit takes custom event names of at most ${MAX_CUSTOM_EVENT_NAME_LENGTH} characters.` });
  }
  return problems;
}

/**
 * The event type a delivery sends: the action's `event_name` (a tracking type or a custom name), else the trigger's
 * default (PURCHASE for a later stage worth more than 0: carriesPaidValue).
 */
export function redditEventType(config: Record<string, unknown>, trigger: EventTrigger, hasValue = false): RedditEventType {
  const name = config.event_name;
  if (typeof name !== 'string' || name === '') {
    return { tracking_type: trigger === 'conversion' && hasValue ? VALUED_CONVERSION_EVENT : DEFAULT_EVENT_NAME[trigger] };
  }
  return (TRACKING_TYPES as readonly string[]).includes(name)
    ? { tracking_type: name as TrackingType }
    : { tracking_type: 'CUSTOM', custom_event_name: name };
}
