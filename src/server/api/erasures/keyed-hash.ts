/** The keyed hash of erasures: recognises a repeated value without storing it (HMAC under the server secret). */
import { serviceKeyedHash } from '../../db/secret-box';
import type { Settings } from '../../settings';

/** The erasure audit's keyed hash for these settings' secret key. */
export function erasureHash(settings: Pick<Settings, 'secretKey' | 'dataDir'>): (value: string) => string {
  return serviceKeyedHash(settings, 'erasure audit');
}

/** Which caller id of a site an erased row keeps the keyed hash of. */
export type ErasedIdKind = 'customer_event_id' | 'adjustment_id';

/**
 * The keyed hash an erased report (or adjustment) keeps of its caller's id, per site: the webhook finds a retry of an
 * erased report by it, though the id itself was replaced (it held the person's email) and is stored nowhere.
 */
export type ErasedIdHash = (siteId: string, kind: ErasedIdKind, id: string) => string;

/** The one definition of ErasedIdHash, under the erasures' keyed hash (the webhook and the erasure share it). */
export function erasedIdHash(hash: (value: string) => string): ErasedIdHash {
  return (siteId, kind, id) => hash(`erased ${kind}\u0000${siteId}\u0000${id}`);
}
