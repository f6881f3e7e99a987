/**
 * TypeBox building blocks shared by every route's schemas: printable path and query text, nullable values, string
 * enums. Each resource's own schemas live in `api/<resource>/schemas.ts` and are exported by name.
 */
import { Type, type Static, type StringOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { NO_CONTROL_CHARACTERS, NOT_BLANK } from './validation';

/** Text from a path or a query string: 1 to `maxLength` (default 200) characters, no control characters. */
export function PlainText(description: string, options: StringOptions = {}) {
  return Type.String({ minLength: 1, maxLength: 200, pattern: NO_CONTROL_CHARACTERS, description, ...options });
}

/** Text that must hold something besides spaces: 1 to `maxLength` characters; the service trims it. */
export function NonBlankText(description: string, maxLength: number) {
  return Type.String({ minLength: 1, maxLength, pattern: NOT_BLANK, description });
}

/** The `{id}` of a path: one object id. */
export function IdParams(description: string) {
  return Type.Object({ id: PlainText(description, { maxLength: 100 }) }, { additionalProperties: false });
}

/** A string from a fixed list (one `enum` keyword, so a failure names the allowed values). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description: string }): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A schema whose value may also be null (one `type` keyword, so a failure keeps the schema's description). */
export function Nullable<T extends TSchema & { type: string }>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

/** The empty body schema of a route that takes none: any JSON object with no properties. */
export const NoParams = Type.Object({}, { additionalProperties: false });
