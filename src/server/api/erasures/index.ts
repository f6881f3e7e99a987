/** The public face of this folder: what other parts of the service may import. */
export { ErasureBody, ListErasuresQuery } from './schemas';
export { erasePerson, erasureTarget, latestErasures, listErasures, previewErasure, ERASURE_FIELDS, type ErasureRecord, type ErasureTarget } from './erasures';
export type { ErasureCounts } from './sql';
export { ERASED_ERROR_CODE } from './sql';
export { erasureHash, erasedIdHash, type ErasedIdHash } from './keyed-hash';
