/**
 * A TikTok flow action's `config`: which event cnv reports (`event_name`, optional). TikTok's standard web events are
 * spelled as TikTok spells them; any other name is a custom event (reported, but TikTok optimises only on standard ones).
 */
import type { EventTrigger, Problem } from '../destination';

/** TikTok's standard web events (Events API 2.0 / Pixel), case as TikTok spells them. */
export const STANDARD_EVENTS = [
  'AddPaymentInfo',
  'AddToCart',
  'AddToWishlist',
  'ApplicationApproval',
  'ClickButton',
  'CompletePayment',
  'CompleteRegistration',
  'Contact',
  'CustomizeProduct',
  'Download',
  'FindLocation',
  'InitiateCheckout',
  'Lead',
  'PlaceAnOrder',
  'Purchase',
  'Schedule',
  'Search',
  'StartTrial',
  'SubmitApplication',
  'SubmitForm',
  'Subscribe',
  'ViewContent',
] as const;

/** Longest event name cnv sends (a custom name beyond it is almost certainly a mistake). */
export const MAX_EVENT_NAME_LENGTH = 100;

/**
 * The event a trigger sends when the action names none: a signup completes a registration, a form submission is a
 * Lead, and a later stage of a customer is a Purchase when it carries a value (a first payment, a renewal), else a
 * Lead. TikTok renamed SubmitForm to Lead and CompletePayment to Purchase on 1 May 2025 ("Any new Pixel setup should
 * use Lead or Purchase instead of the legacy names. Legacy names are auto-converted on the backend", How to Adopt
 * TikTok's Updated Standard Events, ads.tiktok.com/help/article/how-to-adopt-tiktoks-updated-standard-events, checked
 * 2026-11-29); deduplication wants the pixel's `event` identical to the server's, and a pixel set up after that fires
 * the new names, so cnv sends them too. The legacy names stay accepted as an action's `event_name`.
 */
export const DEFAULT_EVENT_NAME: Readonly<Record<EventTrigger, string>> = {
  saas_signup: 'CompleteRegistration',
  conversion: 'Lead',
  form_submission: 'Lead',
};

/** The default event of a later stage that carries a value. */
export const VALUED_CONVERSION_EVENT = 'Purchase';

/** Problems of a TikTok action `config` (`param` is its path); an empty list when cnv can send it. */
export function checkTikTokAction(config: Record<string, unknown>, param: string, _trigger: EventTrigger): Problem[] {
  const problems: Problem[] = [];
  for (const key of Object.keys(config)) {
    if (key !== 'event_name') {
      problems.push({ param: `${param}.${key}`, message: `TikTok actions have no setting '${key}'; the only one is event_name (optional).` });
    }
  }
  const name = config.event_name;
  if (name === undefined) return problems;
  const where = `${param}.event_name`;
  if (typeof name !== 'string' || name === '' || name.trim() !== name) {
    problems.push({ param: where, message: 'event_name must be a non-empty string without surrounding spaces, e.g. "CompleteRegistration" or "Lead".' });
  } else if (name.length > MAX_EVENT_NAME_LENGTH) {
    problems.push({ param: where, message: `event_name may have at most ${MAX_EVENT_NAME_LENGTH} characters.` });
  } else {
    const standard = STANDARD_EVENTS.find((s) => s.toLowerCase() === name.toLowerCase());
    if (standard && standard !== name) {
      problems.push({ param: where, message: `'${name}' differs from TikTok's standard event '${standard}' only in case; write '${standard}'.` });
    }
  }
  return problems;
}

/** The event name a delivery sends: the action's `event_name`, else the trigger's default (Purchase for a stage worth more than 0: carriesPaidValue). */
export function tiktokEventName(config: Record<string, unknown>, trigger: EventTrigger, hasValue = false): string {
  const name = config.event_name;
  if (typeof name === 'string' && name !== '') return name;
  return trigger === 'conversion' && hasValue ? VALUED_CONVERSION_EVENT : DEFAULT_EVENT_NAME[trigger];
}
