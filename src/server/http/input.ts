/**
 * Checks on untrusted input that no route schema covers: plain JSON objects (destination settings, connect forms) and
 * the `cnv` command's arguments. Request bodies, queries and paths are checked by each route's TypeBox schema.
 */
import { invalidParam } from './errors';
import { CONTROL_CHARACTER_RANGES, isSingleLineText } from './validation';

/** A plain JSON object. */
export type JsonObject = Record<string, unknown>;

/** Whether a value is a plain object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A control character (C0, DEL, C1): none belongs in a name or a label. */
const CONTROL_CHARACTER = new RegExp(`[${CONTROL_CHARACTER_RANGES}]`, 'u');

/** Whether a text holds a control character (a line break, a tab, an ESC of a terminal sequence). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/** A line break or tab with the control characters around it; and every control character. */
const LINE_BREAK_RUN = new RegExp(`[${CONTROL_CHARACTER_RANGES}]*[\\t\\n\\v\\f\\r\\u0085][${CONTROL_CHARACTER_RANGES}]*`, 'gu');
const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, 'gu');

/**
 * The text without its control characters (a name stored before names refused them, shown in a form to save again):
 * a line break or tab (with any control characters around it) becomes one space, so the words it parted stay apart;
 * any other control character (ESC, DEL, C1) is left out.
 */
export function withoutControlCharacters(text: string): string {
  return text.replace(LINE_BREAK_RUN, ' ').replace(CONTROL_CHARACTERS, '');
}

/**
 * A name or label: a string holding something besides spaces, of at most `max` characters, one line without control
 * characters, checked as sent (the schemas' NonBlankText, SINGLE_LINE_TEXT: a trailing line break or tab is refused,
 * not trimmed away); returns it trimmed, as the service stores a REST name.
 */
export function nonEmptyString(value: unknown, param: string, max: number): string {
  if (typeof value !== 'string') throw invalidParam(param, `${param} must be a string.`);
  const trimmed = value.trim();
  if (!trimmed) throw invalidParam(param, `${param} must not be empty.`);
  if (!isSingleLineText(value)) throw invalidParam(param, `${param} must be one line of text, without control characters (line breaks, tabs, escape sequences).`);
  if (value.length > max) throw invalidParam(param, `${param} must be at most ${max} characters (got ${value.length}).`);
  return trimmed;
}
