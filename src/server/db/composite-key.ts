/** One string for a tuple of ids, to key a Map by (site, token), (site, customer_event_id) and the like; and their order. */

/**
 * The parts joined by NUL, a character no stored id, token or key can hold (request input with NUL is refused at the
 * edge: it cannot be stored in PostgreSQL text), so two different tuples never give the same key.
 */
export function compositeKey(...parts: ReadonlyArray<string | number>): string {
  return parts.join('\u0000');
}

/**
 * Code-point order of two strings (keys, ids, day and currency texts): the order of the store's `C` collation, the
 * order concurrent writers take a unique index's locks in, and the same in every locale.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
