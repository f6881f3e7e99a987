/**
 * SQL for trigger sources (a site's API trigger) and their webhook secrets. The webhook bridge needs the secrets
 * themselves to compute HMACs, so they cannot be hashed: they are stored sealed with the service's key (db/secret-box.ts),
 * like platform credentials, and opened only here, towards the verifier (once per fill of its cache) and the hosted page.
 */
import type { Queryable } from '../db/db';
import { newId, newWebhookSecret } from '../db/ids';
import { openedOrNull, type SecretBox } from '../db/secret-box';

/** The one trigger source type there is: the signed webhook of the spec's API trigger. */
export type TriggerSourceType = 'api';

/** How long the previous secret keeps verifying after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** A trigger source without its secrets. */
export interface TriggerSourceRow {
  id: string;
  account_id: string;
  site_id: string;
  type: TriggerSourceType;
  created_at: Date;
  rotated_at: Date | null;
  previous_secret_expires_at: Date | null;
}

const COLUMNS = 'id, account_id, site_id, type, created_at, rotated_at, previous_secret_expires_at';

/** The trigger source of a site (of an account), or null when none is connected. */
export async function findTriggerSource(
  db: Queryable,
  accountId: string,
  siteId: string,
  type: TriggerSourceType = 'api',
): Promise<TriggerSourceRow | null> {
  const [row] = await db.query<TriggerSourceRow>(
    `select ${COLUMNS} from trigger_sources where account_id = $1 and site_id = $2 and type = $3`,
    [accountId, siteId, type],
  );
  return row ?? null;
}

/** The trigger sources of several sites of an account, in one statement: each site's, or null when none is connected. */
export async function findTriggerSources(
  db: Queryable,
  accountId: string,
  siteIds: readonly string[],
  type: TriggerSourceType = 'api',
): Promise<Map<string, TriggerSourceRow | null>> {
  const found = new Map<string, TriggerSourceRow | null>(siteIds.map((id) => [id, null]));
  if (siteIds.length === 0) return found;
  const rows = await db.query<TriggerSourceRow>(
    `select ${COLUMNS} from trigger_sources where account_id = $1 and site_id = any($2::text[]) and type = $3`,
    [accountId, [...siteIds], type],
  );
  for (const row of rows) found.set(row.site_id, row);
  return found;
}

/**
 * Connects a site's trigger source with a fresh webhook secret: creates it, or, when it exists, rotates its secret
 * (the previous one verifies for 24 hours more, so a running integration does not break at once).
 * The caller has checked that the site belongs to the account. Returns the new secret, once.
 */
export async function connectTriggerSource(
  db: Queryable,
  box: SecretBox,
  accountId: string,
  siteId: string,
  type: TriggerSourceType = 'api',
  now: Date = new Date(),
): Promise<{ source: TriggerSourceRow; secret: string; created: boolean }> {
  const secret = newWebhookSecret();
  const [row] = await db.query<TriggerSourceRow>(
    `insert into trigger_sources (id, account_id, site_id, type, secret, created_at) values ($1, $2, $3, $4, $5, $6)
     on conflict (site_id, type) do update set
       previous_secret = trigger_sources.secret, previous_secret_expires_at = $7,
       secret = excluded.secret, rotated_at = $6
     returning ${COLUMNS}`,
    [newId('trs'), accountId, siteId, type, box.seal(secret), now, new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS)],
  );
  return { source: row!, secret, created: row!.rotated_at === null };
}

/**
 * Rotates the webhook secret of a site's trigger source: the current secret becomes the previous one (valid 24 hours
 * more) and a new one is returned, once. Null when the site has no such trigger source.
 */
export async function rotateWebhookSecret(
  db: Queryable,
  box: SecretBox,
  siteId: string,
  type: TriggerSourceType = 'api',
  now: Date = new Date(),
): Promise<{ source: TriggerSourceRow; secret: string } | null> {
  const secret = newWebhookSecret();
  const [row] = await db.query<TriggerSourceRow>(
    `update trigger_sources set previous_secret = secret, previous_secret_expires_at = $3, secret = $4, rotated_at = $5
     where site_id = $1 and type = $2 returning ${COLUMNS}`,
    [siteId, type, new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS), box.seal(secret), now],
  );
  return row ? { source: row, secret } : null;
}

/**
 * Ends the grace period of the previous webhook secret at once (after a rotation because the old one leaked): from
 * this call on only the current secret verifies, on every instance (the secret cache re-reads the store before it
 * trusts a previous secret). Returns false when there was no previous secret still verifying.
 */
export async function revokePreviousWebhookSecret(
  db: Queryable,
  accountId: string,
  siteId: string,
  type: TriggerSourceType = 'api',
  now: Date = new Date(),
): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `update trigger_sources set previous_secret = null, previous_secret_expires_at = null
     where account_id = $1 and site_id = $2 and type = $3 and previous_secret is not null and previous_secret_expires_at > $4
     returning id`,
    [accountId, siteId, type, now],
  );
  return rows.length > 0;
}

/** A site's webhook secrets as stored (sealed): the current one and, after a rotation, the previous one until it expires. */
export interface WebhookSecretsRow {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/** The stored (sealed) webhook secrets of a site's API trigger source, or null when none is connected. */
export async function findWebhookSecrets(db: Queryable, siteId: string): Promise<WebhookSecretsRow | null> {
  const [row] = await db.query<WebhookSecretsRow>(
    `select secret, previous_secret, previous_secret_expires_at from trigger_sources where site_id = $1 and type = 'api'`,
    [siteId],
  );
  return row ?? null;
}

/**
 * A site's webhook secrets opened: null for one that does not open with the service's key (the key changed since it
 * was sealed, or the value was altered), which then verifies nothing until the secret is rotated.
 */
export interface OpenedWebhookSecrets {
  secret: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/** The stored secrets of a row opened with the service's box. */
export function openWebhookSecrets(box: SecretBox, row: WebhookSecretsRow): OpenedWebhookSecrets {
  return {
    secret: openedOrNull(box, row.secret),
    previous_secret: row.previous_secret === null ? null : openedOrNull(box, row.previous_secret),
    previous_secret_expires_at: row.previous_secret_expires_at,
  };
}

/** The stored webhook secrets of a site's API trigger source, opened; null when none is connected. */
export async function findOpenedWebhookSecrets(db: Queryable, box: SecretBox, siteId: string): Promise<OpenedWebhookSecrets | null> {
  const row = await findWebhookSecrets(db, siteId);
  return row ? openWebhookSecrets(box, row) : null;
}

/**
 * The secrets of an opened row that verify at `now`: the current one, then the previous one while its grace lasts.
 * None when the current one did not open (both were sealed with the same key; an index past 0 always means "previous").
 */
export function secretsValidAt(row: OpenedWebhookSecrets | null, now: Date = new Date()): string[] {
  if (!row || row.secret === null) return [];
  const previousValid =
    row.previous_secret !== null && row.previous_secret_expires_at !== null && row.previous_secret_expires_at.getTime() > now.getTime();
  return previousValid ? [row.secret, row.previous_secret!] : [row.secret];
}

/**
 * The secrets a webhook signature of this site may be made with at `now`: the current one and, during the 24 hours
 * after a rotation, the previous one. Empty when the site has no API trigger source connected (or its secrets do not
 * open with this box).
 */
export async function activeWebhookSecrets(db: Queryable, box: SecretBox, siteId: string, now: Date = new Date()): Promise<string[]> {
  return secretsValidAt(await findOpenedWebhookSecrets(db, box, siteId), now);
}
