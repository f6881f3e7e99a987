/** Checks on untrusted request input (JSON bodies and query strings) that turn every mistake into a named 400. */
import { ApiError, invalidParam, missingParam } from './errors';

/** A plain JSON object. */
export type JsonObject = Record<string, unknown>;

/** Whether a value is a plain object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The request body as an object, or a 400 saying it must be one. */
export function requireObjectBody(body: unknown): JsonObject {
  if (!isObject(body)) {
    throw new ApiError(400, 'invalid_request_error', 'invalid_body', 'The request body must be a JSON object.');
  }
  return body;
}

/** Rejects any key of `input` not in `allowed`, naming the first (so a typo never silently does nothing). */
export function rejectUnknownFields(input: JsonObject, allowed: readonly string[], prefix = ''): void {
  for (const key of Object.keys(input)) {
    if (!allowed.includes(key)) {
      throw invalidParam(
        `${prefix}${key}`,
        `Unknown parameter: ${prefix}${key}. Allowed here: ${allowed.join(', ')}.`,
        'parameter_unknown',
      );
    }
  }
}

/** A required, non-empty (after trimming) string of at most `max` characters, trimmed. */
export function requiredString(input: JsonObject, key: string, max: number, param = key): string {
  if (input[key] === undefined || input[key] === null) throw missingParam(param);
  return nonEmptyString(input[key], param, max);
}

/** A value that must be a non-empty (after trimming) string of at most `max` characters; returns it trimmed. */
export function nonEmptyString(value: unknown, param: string, max: number): string {
  if (typeof value !== 'string') throw invalidParam(param, `${param} must be a string.`);
  const trimmed = value.trim();
  if (!trimmed) throw invalidParam(param, `${param} must not be empty.`);
  if (trimmed.length > max) throw invalidParam(param, `${param} must be at most ${max} characters (got ${trimmed.length}).`);
  return trimmed;
}

/** A single query parameter as a string, or undefined when absent; repeated parameters are rejected. */
export function queryString(query: JsonObject, key: string): string | undefined {
  const value = query[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidParam(key, `Query parameter ${key} was given more than once.`);
  return value;
}
