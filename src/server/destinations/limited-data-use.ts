/**
 * Limited Data Use: a connection's choice, asked on the hosted connect page of the platforms that take it per event
 * (Meta's `data_processing_options`, TikTok's `limited_data_use`), to have every conversion it sends processed under
 * the platform's US state privacy terms. The platform applies it to people in the states it lists, by their location
 * (Meta geolocates an event sent with country and state 0); elsewhere it changes nothing. Off unless chosen: stored as
 * the setting `limited_data_use: true`, absent otherwise, so connections made before the choice existed stay as they
 * were. Each platform's module says how it sends it and what was verified.
 */
import type { ConnectField, Problem } from './destination';

/** The connection setting (and form field) holding the choice. */
export const LIMITED_DATA_USE = 'limited_data_use';

const CHOICES = [
  { value: 'off', label: 'Off' },
  { value: 'on', label: 'On' },
] as const;

/** The hosted page's field: `hint` says what the platform does with it. Off is first, so the page starts at off. */
export function limitedDataUseField(hint: string): ConnectField {
  return {
    name: LIMITED_DATA_USE, label: 'Limited Data Use (US state privacy laws)', hint, required: false, choices: CHOICES,
    // A reconnect (a new token, say) keeps the choice unless changed.
    storedChoice: (settings) => (limitedDataUseOn(settings) ? 'on' : 'off'),
  };
}

/** The choice a submitted form made: on, off (also when not sent), or a problem for any other value. */
export function parseLimitedDataUse(form: Readonly<Record<string, string>>): { on: boolean } | { problem: Problem } {
  const sent = (form[LIMITED_DATA_USE] ?? '').trim();
  if (sent === '' || sent === 'off') return { on: false };
  if (sent === 'on') return { on: true };
  return { problem: { param: LIMITED_DATA_USE, message: 'Choose Off or On for Limited Data Use.' } };
}

/** Whether a connection sends its conversions as Limited Data Use. */
export const limitedDataUseOn = (settings: Readonly<Record<string, unknown>>): boolean => settings[LIMITED_DATA_USE] === true;
