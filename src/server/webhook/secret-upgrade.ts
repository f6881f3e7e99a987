/**
 * Webhook secrets at the start of the service. Versions before sealing stored them in clear (`whsec_…`); the start
 * seals every such value once, with the service's key (migrations are SQL and have no key). Each value is replaced by
 * a guarded update (only while the stored value is still that clear one), so two processes starting at once on one
 * PostgreSQL never seal a value twice, and a second start finds nothing to do. Reading accepts sealed values only
 * (secret-sql.ts): a clear value is sealed here or not used.
 *
 * The same pass counts the sources whose current secret does not open with this key (CNV_SECRET_KEY changed, or the
 * store was restored without its key): their webhook refuses every signature until their secret is rotated.
 */
import type { Queryable } from '../db/db';
import { openedOrNull, sealValuesStoredInClear, type SecretBox } from '../db/secret-box';

export interface WebhookSecretsAtStart {
  /** Values (current or previous secrets) found in clear and sealed by this start. */
  sealed: number;
  /** Trigger sources whose current secret does not open with this key: they must be rotated. */
  notOpening: number;
}

/** Seals the webhook secrets stored in clear, and counts those that do not open with this key. */
export async function sealWebhookSecretsAtStart(db: Queryable, box: SecretBox): Promise<WebhookSecretsAtStart> {
  let sealed = 0;
  for (const column of ['secret', 'previous_secret'] as const) sealed += await sealValuesStoredInClear(db, box, 'trigger_sources', column);
  const rows = await db.query<{ secret: string }>('select secret from trigger_sources');
  const notOpening = rows.filter((row) => openedOrNull(box, row.secret) === null).length;
  return { sealed, notOpening };
}
