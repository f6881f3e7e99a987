/** The keyed hash of erasures: recognises a repeated value without storing it (HMAC under the server secret). */
import { serviceKeyedHash } from '../../db/secret-box';
import type { Settings } from '../../settings';

/** The erasure audit's keyed hash for these settings' secret key. */
export function erasureHash(settings: Pick<Settings, 'secretKey' | 'dataDir'>): (value: string) => string {
  return serviceKeyedHash(settings, 'erasure audit');
}
