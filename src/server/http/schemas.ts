/**
 * TypeBox building blocks shared by every route's schemas: printable path and query text, nullable values, string
 * enums. Each resource's own schemas live in `api/<resource>/schemas.ts` and are exported by name.
 */
import { Type, type Static, type StringOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { NO_CONTROL_CHARACTERS, SINGLE_LINE_TEXT } from './validation';
import { ERROR_TYPES } from '../../protocol/errors';

/** Text from a path or a query string: 1 to `maxLength` (default 200) characters, no control characters. */
export function PlainText(description: string, options: StringOptions = {}) {
  return Type.String({ minLength: 1, maxLength: 200, pattern: NO_CONTROL_CHARACTERS, description, ...options });
}

/**
 * A name or label: one line of 1 to `maxLength` characters holding something besides spaces, without control
 * characters; the service trims it.
 */
export function NonBlankText(description: string, maxLength: number) {
  return Type.String({ minLength: 1, maxLength, pattern: SINGLE_LINE_TEXT, description: `${description} One line, without control characters (line breaks, tabs, escape sequences).` });
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

/** A timestamp the service writes: ISO 8601 in UTC with milliseconds. */
export function Timestamp(description: string) {
  return Type.String({ format: 'date-time', description });
}

/** The one error envelope of every error answer (src/protocol/errors.ts). */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        type: StringEnum(ERROR_TYPES, { description: 'The kind of error.' }),
        code: Type.String({ description: 'Machine-readable reason, e.g. parameter_invalid, resource_missing.' }),
        message: Type.String({ description: 'A sentence for a person: what is wrong and what to do.' }),
        param: Type.Optional(Type.String({ description: 'The parameter at fault: a dotted path with indexes inside bodies.' })),
      },
      { additionalProperties: true },
    ),
  },
  { title: 'Error', description: 'Every error answer: {"error": {"type", "code", "message", "param"?}}.', additionalProperties: false },
);

/** The list envelope of the id-cursor lists: `{data, has_more, next_cursor}`. */
export function ListOf<T extends TSchema>(item: T, what: string) {
  return Type.Object(
    {
      data: Type.Array(item, { description: `The ${what}, in creation order (oldest first).` }),
      has_more: Type.Boolean({ description: 'Whether more items follow (walking forward) or precede (walking backward) this page.' }),
      next_cursor: Nullable(Type.String({ description: 'The id to pass as starting_after (or ending_before, walking backward); null when has_more is false.' })),
    },
    { additionalProperties: false },
  );
}
