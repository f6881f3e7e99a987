/**
 * Checks on untrusted input that no route schema covers: plain JSON objects (destination settings, connect forms) and
 * the `cnv` command's arguments. Request bodies, queries and paths are checked by each route's TypeBox schema.
 */
import { invalidParam } from './errors';

/** A plain JSON object. */
export type JsonObject = Record<string, unknown>;

/** Whether a value is a plain object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A control character (C0, DEL, C1): none belongs in a name or a label. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** Whether a text holds a control character (a line break, a tab, an ESC of a terminal sequence). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/** The text without its control characters (a name stored before names refused them, shown in a form to save again). */
export function withoutControlCharacters(text: string): string {
  return text.replace(new RegExp(CONTROL_CHARACTER.source, 'g'), '');
}

/**
 * A name or label: a non-empty (after trimming) string of at most `max` characters, one line without control
 * characters (as the schemas' NonBlankText, which sees the value as sent: a trailing line break or tab is refused
 * here too, not trimmed away); returns it trimmed of spaces.
 */
export function nonEmptyString(value: unknown, param: string, max: number): string {
  if (typeof value !== 'string') throw invalidParam(param, `${param} must be a string.`);
  if (hasControlCharacter(value)) throw invalidParam(param, `${param} must be one line of text, without control characters (line breaks, tabs, escape sequences).`);
  const trimmed = value.trim();
  if (!trimmed) throw invalidParam(param, `${param} must not be empty.`);
  if (trimmed.length > max) throw invalidParam(param, `${param} must be at most ${max} characters (got ${trimmed.length}).`);
  return trimmed;
}
