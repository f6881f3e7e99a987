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

/** A value that must be a non-empty (after trimming) string of at most `max` characters; returns it trimmed. */
export function nonEmptyString(value: unknown, param: string, max: number): string {
  if (typeof value !== 'string') throw invalidParam(param, `${param} must be a string.`);
  const trimmed = value.trim();
  if (!trimmed) throw invalidParam(param, `${param} must not be empty.`);
  if (trimmed.length > max) throw invalidParam(param, `${param} must be at most ${max} characters (got ${trimmed.length}).`);
  return trimmed;
}
