/**
 * A Meta flow action's `config`: which event name cnv sends. Checked at publish, read at delivery.
 *
 * Standard events: https://developers.facebook.com/docs/meta-pixel/reference (the table of `fbq('track')` events).
 * Custom events: "Custom event names must be strings, and cannot exceed 50 characters in length."
 * (https://developers.facebook.com/docs/meta-pixel/implementation/conversion-tracking#custom-events)
 */
import type { EventTrigger, Problem } from '../destination';

/** Meta's standard events, spelled as Meta spells them (case matters: `lead` would be a custom event). */
export const STANDARD_EVENTS = [
  'AddPaymentInfo',
  'AddToCart',
  'AddToWishlist',
  'CompleteRegistration',
  'Contact',
  'CustomizeProduct',
  'Donate',
  'FindLocation',
  'InitiateCheckout',
  'Lead',
  'Purchase',
  'Schedule',
  'Search',
  'StartTrial',
  'SubmitApplication',
  'Subscribe',
  'ViewContent',
] as const;

/** Longest custom event name Meta takes. */
export const MAX_EVENT_NAME_LENGTH = 50;

/**
 * The event a trigger sends when the action names none: a signup completes a registration, a form brings a lead, and
 * a later stage of a customer is a Purchase when it carries a value (a payment, a renewal), else a Lead (a qualified
 * lead, a trial started).
 */
export const DEFAULT_EVENT_NAME: Readonly<Record<EventTrigger, string>> = {
  saas_signup: 'CompleteRegistration',
  conversion: 'Lead',
  form_submission: 'Lead',
};

/** The default event of a later stage that carries a value. */
export const VALUED_CONVERSION_EVENT = 'Purchase';

const ALLOWED_KEYS = new Set(['event_name']);

/** Problems of a Meta action `config` (`param` is its path); an empty list when cnv can send it. */
export function checkMetaAction(config: Record<string, unknown>, param: string, trigger: EventTrigger): Problem[] {
  const problems: Problem[] = [];
  for (const key of Object.keys(config)) {
    if (!ALLOWED_KEYS.has(key)) {
      problems.push({
        param: `${param}.${key}`,
        message: `Meta actions have no setting '${key}'; the only one is event_name (optional).`,
      });
    }
  }
  if (!('event_name' in config) || config.event_name === undefined) return problems;
  const name = config.event_name;
  const where = `${param}.event_name`;
  if (typeof name !== 'string') {
    problems.push({ param: where, message: 'event_name must be a string, e.g. "Lead" or "CompleteRegistration".' });
    return problems;
  }
  if (name.trim() !== name || name === '') {
    problems.push({ param: where, message: 'event_name must not be empty or start or end with spaces.' });
    return problems;
  }
  if (name.length > MAX_EVENT_NAME_LENGTH) {
    problems.push({ param: where, message: `Meta takes event names of at most ${MAX_EVENT_NAME_LENGTH} characters.` });
    return problems;
  }
  if (name === 'Purchase' && trigger === 'form_submission') {
    // Meta requires currency and value on Purchase; a form submission carries neither (a webhook report can).
    problems.push({
      param: where,
      message: 'Purchase needs a currency and a value, which a form submission does not carry; use Lead or CompleteRegistration, or report the purchase through the webhook with its value.',
    });
    return problems;
  }
  const standard = STANDARD_EVENTS.find((s) => s.toLowerCase() === name.toLowerCase());
  if (standard && standard !== name) {
    problems.push({
      param: where,
      message: `'${name}' differs from Meta's standard event '${standard}' only in case, so Meta would count it as a custom event; write '${standard}'.`,
    });
  }
  return problems;
}

/** The event name a delivery sends: the action's `event_name`, else the trigger's default (Purchase for a stage worth more than 0: carriesPaidValue). */
export function metaEventName(config: Record<string, unknown>, trigger: EventTrigger, hasValue = false): string {
  const name = config.event_name;
  if (typeof name === 'string' && name !== '') return name;
  return trigger === 'conversion' && hasValue ? VALUED_CONVERSION_EVENT : DEFAULT_EVENT_NAME[trigger];
}
