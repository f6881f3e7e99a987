/** SHA-256 as every ad platform takes hashed identifiers: lower-case hex of the UTF-8 bytes. */
import { createHash } from 'node:crypto';

/** Lower-case hex SHA-256 of a UTF-8 string. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * A hasher of identity fields for one conversion: `hash(field, raw, normalize, why)` is the SHA-256 of the normalised
 * value, or null when the field was not given (absent or blank) or the platform's rule refuses it; a refusal adds
 * "<field> skipped: <why>" to `skipped` (the note never holds the value).
 */
export function identityHasher(skipped: string[]) {
  return (field: string, raw: string | null | undefined, normalize: (value: string) => string | null, why: string): string | null => {
    if (typeof raw !== 'string' || raw.trim() === '') return null;
    const normalized = normalize(raw);
    if (normalized === null) {
      skipped.push(`${field} skipped: ${why}`);
      return null;
    }
    return sha256Hex(normalized);
  };
}
