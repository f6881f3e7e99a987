/** Capping a value sent to the service. */
import { FORM_VALUE_MAX } from '../protocol/forms';

/** value cut to at most max UTF-16 code units, never between the two halves of a surrogate pair. */
export function capValue(value: string, max: number = FORM_VALUE_MAX): string {
  if (value.length <= max) return value;
  const last = value.charCodeAt(max - 1);
  // A high surrogate as the last unit kept would be half a character: drop it too.
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
