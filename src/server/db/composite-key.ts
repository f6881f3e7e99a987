/** One string for a tuple of ids, to key a Map by (site, token), (site, customer_event_id) and the like. */

/**
 * The parts joined by NUL, a character no stored id, token or key can hold (request input with NUL is refused at the
 * edge: it cannot be stored in PostgreSQL text), so two different tuples never give the same key.
 */
export function compositeKey(...parts: ReadonlyArray<string | number>): string {
  return parts.join('\u0000');
}
