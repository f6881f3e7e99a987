/**
 * Cursor pagination of every list endpoint except events: `limit`, `starting_after`, `ending_before`, and the list
 * envelope `{data, has_more, next_cursor}`. Lists are in creation order (ascending); a cursor is an object id.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ApiError, invalidParam, printable } from './errors';
import { PlainText } from './schemas';

/** Default and largest `limit` of lists other than events (spec, Limits). */
export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;

/** A cursor: an object id of the list. One that does not resolve is 400 `invalid_cursor` naming it (spec, Errors). */
function Cursor(description: string) {
  return PlainText(description, { errorCode: 'invalid_cursor' });
}

/** What starting_after's description adds for REST, where ending_before is also offered (a tool leaves it out). */
export const NOT_WITH_ENDING_BEFORE = ' Not combinable with ending_before.';

/** The query parameters of an id-cursor list; list endpoints add their own filters to these. */
export const PageQueryProperties = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, description: `How many items to return: 1 to ${LIST_LIMIT_MAX}, ${LIST_LIMIT_DEFAULT} when left out.` }),
  ),
  starting_after: Type.Optional(
    Cursor(`Return the items after this id: the next_cursor of the previous page.${NOT_WITH_ENDING_BEFORE}`),
  ),
  ending_before: Type.Optional(Cursor('Return the items before this id, to walk backward. Not combinable with starting_after.')),
};

/** The query of a list that has no filters. */
export const PageQuery = Type.Object(PageQueryProperties, { additionalProperties: false });
export type PageQuery = Static<typeof PageQuery>;

/** Where a page starts: after an id (walking forward), before an id (walking backward), or at the start. */
export type PageCursor = { direction: 'after' | 'before'; id: string } | null;

export interface PageRequest {
  limit: number;
  cursor: PageCursor;
}

/** The list envelope of the spec. */
export interface ListEnvelope<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** One page of rows as a store returns it: up to `limit` rows in ascending order, and whether more lie beyond. */
export interface RowPage<R> {
  rows: R[];
  hasMore: boolean;
}

/**
 * What a store function answers for a page request: the page, or `'unknown_cursor'` when the cursor id is not an
 * object of this list in this account (another account's id included: it must not resolve).
 */
export type PageResult<R> = RowPage<R> | 'unknown_cursor';

/** The page a (schema-checked) list query asks for; both cursors at once is 400 `parameter_conflict`. */
export function pageRequestOf(query: PageQuery, fallback = LIST_LIMIT_DEFAULT): PageRequest {
  const limit = query.limit ?? fallback;
  const { starting_after: after, ending_before: before } = query;
  if (after !== undefined && before !== undefined) {
    throw invalidParam(
      'ending_before',
      'starting_after and ending_before cannot be combined: pass one cursor (starting_after to walk forward, ending_before to walk backward).',
      'parameter_conflict',
    );
  }
  if (after !== undefined) return { limit, cursor: { direction: 'after', id: after } };
  if (before !== undefined) return { limit, cursor: { direction: 'before', id: before } };
  return { limit, cursor: null };
}

/** 400 `invalid_cursor` naming the parameter, as the spec's Errors table says. */
export function invalidCursor(param: string, value: string): ApiError {
  return invalidParam(
    param,
    `${param} '${printable(value)}' does not resolve: pass the id of an object from this list (for example a previous next_cursor).`,
    'invalid_cursor',
  );
}

/**
 * Runs a page request against a store function and builds the envelope. Walking forward, next_cursor is the last
 * item's id (pass it as starting_after); walking backward with ending_before, it is the first item's id (pass it as
 * ending_before to keep going back). It is null when has_more is false.
 */
export async function paginate<R extends { id: string }, T>(
  request: PageRequest,
  fetchPage: (request: PageRequest) => Promise<PageResult<R>>,
  toRecord: (row: R) => T,
): Promise<ListEnvelope<T>> {
  const page = await fetchPage(request);
  if (page === 'unknown_cursor') {
    const cursor = request.cursor!;
    throw invalidCursor(cursor.direction === 'after' ? 'starting_after' : 'ending_before', cursor.id);
  }
  const backward = request.cursor?.direction === 'before';
  const edge = backward ? page.rows[0] : page.rows[page.rows.length - 1];
  return {
    data: page.rows.map(toRecord),
    has_more: page.hasMore,
    next_cursor: page.hasMore && edge ? edge.id : null,
  };
}
