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
import { looksSealed, type SecretBox } from '../db/secret-box';
import { openWebhookSecret } from './secret-sql';

export interface WebhookSecretsAtStart {
  /** Values (current or previous secrets) found in clear and sealed by this start. */
  sealed: number;
  /** Trigger sources whose current secret does not open with this key: they must be rotated. */
  notOpening: number;
}

const COLUMNS = ['secret', 'previous_secret'] as const;

/** Seals the webhook secrets stored in clear, and counts those that do not open with this key. */
export async function sealWebhookSecretsAtStart(db: Queryable, box: SecretBox): Promise<WebhookSecretsAtStart> {
  const rows = await db.query<{ id: string; secret: string; previous_secret: string | null }>(
    'select id, secret, previous_secret from trigger_sources',
  );
  let sealed = 0;
  let notOpening = 0;
  for (const row of rows) {
    for (const column of COLUMNS) {
      const value = row[column];
      if (value === null || looksSealed(value)) continue;
      const updated = await db.query(`update trigger_sources set ${column} = $2 where id = $1 and ${column} = $3 returning id`, [
        row.id,
        box.seal(value),
        value,
      ]);
      sealed += updated.length;
    }
    if (looksSealed(row.secret) && openWebhookSecret(box, row.secret) === null) notOpening++;
  }
  return { sealed, notOpening };
}
