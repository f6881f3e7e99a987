/**
 * Checking a JSON body that a route reads by hand (the webhook's, whose signature covers the raw bytes, so Fastify's
 * schema step cannot run first) against a TypeBox schema: the same refusals as the route schemas, one 400 envelope
 * naming the first field at fault, never a 500. Unknown fields are left alone (bodies stay forward compatible).
 */
import { FormatRegistry, Kind, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { exceedsCharacters } from '../../protocol/webhook';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { ApiError, invalidParam, missingParam } from './errors';

/** `/a/0/b` as the envelope names it: `a[0].b`. */
function paramOf(path: string): string {
  return path
    .split('/')
    .slice(1)
    .reduce((out, segment) => (/^\d+$/.test(segment) && out ? `${out}[${segment}]` : out ? `${out}.${segment}` : segment), '');
}

/** The description of the schema at fault, or of the union it sits in. */
function describe(error: ValueError): string | undefined {
  return (error.schema as { description?: string }).description;
}

function toApiError(error: ValueError): ApiError {
  const param = paramOf(error.path);
  if (!param) return new ApiError(400, 'invalid_request_error', 'invalid_json', 'The body must be a JSON object.');
  if (error.type === ValueErrorType.ObjectRequiredProperty) return missingParam(param);
  const description = describe(error);
  return invalidParam(param, `Invalid parameter '${param}'.${description ? ` Expected: ${description}` : ''}`);
}

/** The name of a string format that holds text of at most `max` characters (code points), registered once. */
function atMostCharacters(max: number): string {
  const name = `cnv-at-most-${max}-characters`;
  if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, (text) => !exceedsCharacters(text, max));
  return name;
}

/**
 * `schema` with each string's `maxLength` counted in characters (code points), as the route schemas (Ajv) and the
 * OpenAPI document count it, not in UTF-16 code units as TypeBox's compiler does: the limit becomes a format, and
 * `maxLength` the UTF-16 bound it implies (two units at most per character), so an emoji counts once. A string that
 * already has a format keeps TypeBox's count. The schema given is left as it is (the OpenAPI document reads it).
 */
export function countingCharacters<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(countingCharacters) as T;
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<PropertyKey, unknown> = {};
  for (const key of Reflect.ownKeys(schema)) copy[key] = countingCharacters((schema as Record<PropertyKey, unknown>)[key]);
  if (copy[Kind] === 'String' && typeof copy.maxLength === 'number' && copy.format === undefined) {
    copy.format = atMostCharacters(copy.maxLength);
    copy.maxLength = copy.maxLength * 2;
  }
  return copy as T;
}

/**
 * A checker for one schema, compiled once: returns the value typed, or throws the 400 of the first fault. A union's
 * branch errors are skipped in favour of the union's own error, which carries its description.
 */
export function bodyChecker<T extends TSchema>(schema: T): (value: unknown) => Static<T> {
  const compiled = TypeCompiler.Compile(countingCharacters(schema));
  return (value) => {
    if (compiled.Check(value)) return value;
    const errors = [...compiled.Errors(value)];
    const first = errors.find((e) => e.type === ValueErrorType.Union || describe(e) !== undefined || e.type === ValueErrorType.ObjectRequiredProperty) ?? errors[0];
    throw first ? toApiError(first) : new ApiError(400, 'invalid_request_error', 'invalid_json', 'The body is not valid.');
  };
}
