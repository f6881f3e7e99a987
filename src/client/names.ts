/** Which known name a misspelled one most likely means (`customer_id` → customerId, `timeout` → timeoutMs). */

/** The name with the same letters but for case and `_`/`-`, else one it is a prefix of (4 letters at least); undefined when none. */
export function meantName(name: string, names: readonly string[]): string | undefined {
  const plain = name.toLowerCase().replace(/[_-]/g, '');
  return (
    names.find((known) => known.toLowerCase() === plain) ??
    names.find((known) => plain.length >= 4 && known.toLowerCase().startsWith(plain))
  );
}
