/** SQL for accounts and API keys. */
import type { Queryable } from '../db/db';
import { hashSecret, newApiKey, newId } from '../db/ids';

export interface Account {
  id: string;
  name: string;
  created_at: Date;
}

/** Creates an account. */
export async function insertAccount(db: Queryable, name: string): Promise<Account> {
  const [row] = await db.query<Account>('insert into accounts (id, name) values ($1, $2) returning id, name, created_at', [
    newId('acct'),
    name,
  ]);
  return row!;
}

/** Issues a new API key for an account; the clear key is returned once and only its hash is stored. */
export async function issueApiKey(db: Queryable, accountId: string, label = ''): Promise<{ id: string; key: string }> {
  const key = newApiKey();
  const id = newId('key');
  await db.query('insert into api_keys (id, account_id, label, prefix, key_hash) values ($1, $2, $3, $4, $5)', [
    id,
    accountId,
    label,
    key.slice(0, 12),
    hashSecret(key),
  ]);
  return { id, key };
}

/** The account a clear API key belongs to, or null for an unknown or revoked key. */
export async function findAccountByApiKey(db: Queryable, key: string): Promise<Account | null> {
  return (await findApiKeyAccount(db, key))?.account ?? null;
}

/** How precisely an API key's last use is kept: written again only once it is older than this. */
export const KEY_USE_RESOLUTION_SECONDS = 60;

/** A live API key's account and the key's id, or null when the key is unknown or revoked. */
export async function findApiKeyAccount(db: Queryable, key: string): Promise<{ account: Account; keyId: string } | null> {
  // The key's last use is written at most once a minute (KEY_USE_RESOLUTION_SECONDS): the update matches no row
  // otherwise, so a busy key costs no write per request.
  const [row] = await db.query<Account & { key_id: string }>(
    `with found as (
       select a.id, a.name, a.created_at, k.id as key_id, k.last_used_at from api_keys k join accounts a on a.id = k.account_id
       where k.key_hash = $1 and k.revoked_at is null
     ), used as (
       update api_keys set last_used_at = now() where id = (select key_id from found)
         and (last_used_at is null or last_used_at < now() - make_interval(secs => $2))
     )
     select id, name, created_at, key_id from found`,
    [hashSecret(key), KEY_USE_RESOLUTION_SECONDS],
  );
  if (!row) return null;
  const { key_id: keyId, ...account } = row;
  return { account, keyId };
}

/** An account's name ('' for an unknown id). */
export async function accountName(db: Queryable, accountId: string): Promise<string> {
  const [row] = await db.query<{ name: string }>('select name from accounts where id = $1', [accountId]);
  return row?.name ?? '';
}

/** All accounts, oldest first. */
export async function listAccounts(db: Queryable): Promise<Account[]> {
  return db.query<Account>('select id, name, created_at from accounts order by created_at, id');
}

/** An API key as listed: never the key itself, only its first characters. */
export interface ApiKeyRow {
  id: string;
  account_id: string;
  label: string;
  prefix: string;
  created_at: Date;
  revoked_at: Date | null;
  /** When the key last authenticated a request, to the minute (KEY_USE_RESOLUTION_SECONDS); null: never. */
  last_used_at: Date | null;
}

const API_KEY_COLUMNS = 'id, account_id, label, prefix, created_at, revoked_at, last_used_at';

/** The API keys of every account (or of one), oldest first. */
export async function listApiKeys(db: Queryable, accountId?: string): Promise<ApiKeyRow[]> {
  return accountId
    ? db.query<ApiKeyRow>(`select ${API_KEY_COLUMNS} from api_keys where account_id = $1 order by created_at, id`, [accountId])
    : db.query<ApiKeyRow>(`select ${API_KEY_COLUMNS} from api_keys order by created_at, id`);
}

/**
 * Revokes a key by id (from then on it is 401; a key revoked before keeps its first revocation time), and with it the
 * dashboard sign-in links asked for with it and the sessions opened with those (one statement: a revoked key leaves
 * nothing behind that still works). Null: no such key.
 */
export async function revokeApiKey(db: Queryable, id: string): Promise<ApiKeyRow | null> {
  const [row] = await db.query<ApiKeyRow>(
    `with revoked as (
       update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning ${API_KEY_COLUMNS}
     ), sessions as (
       delete from dashboard_sessions where api_key_id = $1 and exists (select 1 from revoked)
     ), links as (
       delete from dashboard_sign_in_tokens where api_key_id = $1 and used_at is null and exists (select 1 from revoked)
     )
     select * from revoked`,
    [id],
  );
  return row ?? null;
}
