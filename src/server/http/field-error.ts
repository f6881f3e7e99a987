/**
 * A form field's error, tied to its control one way on every page (the dashboard, the hosted pages, the demo): the
 * control says aria-invalid and names in aria-describedby its hint and then the message shown under it, a
 * `<p class="field-error">`. A screen reader reads the message with the field, not only somewhere above the form.
 */
import { html, type Html } from './html';

/** The id of the message under the control `controlId`. */
export function fieldErrorId(controlId: string): string {
  return `${controlId}-error`;
}

/**
 * The attributes of a control: aria-describedby naming the ids of its notes (its hint…) and, when `invalid`, its
 * message (fieldError); aria-invalid="true" then.
 */
export function fieldAttributes(controlId: string, notes: readonly string[], invalid: boolean): Html {
  const described = [...notes, ...(invalid ? [fieldErrorId(controlId)] : [])];
  return html`${described.length > 0 ? html` aria-describedby="${described.join(' ')}"` : ''}${invalid ? html` aria-invalid="true"` : ''}`;
}

/** The message under the control `controlId`, or nothing when there is none. */
export function fieldError(controlId: string, message: string | null | undefined): Html | '' {
  return message ? html`<p class="field-error" id="${fieldErrorId(controlId)}">${message}</p>` : '';
}

/** The style of fieldError(), for a stylesheet that defines --bad. */
export const FIELD_ERROR_STYLE = `
.field-error { color: var(--bad); font-size: .875rem; font-weight: 400; margin: 4px 0 0; overflow-wrap: anywhere; }
`;
