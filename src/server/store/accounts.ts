/** SQL for accounts and API keys. */
import type { Queryable } from './db';
import { hashSecret, newApiKey, newId } from '../ids';

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
  const [row] = await db.query<Account>(
    `select a.id, a.name, a.created_at from api_keys k join accounts a on a.id = k.account_id
     where k.key_hash = $1 and k.revoked_at is null`,
    [hashSecret(key)],
  );
  return row ?? null;
}

/** All accounts, oldest first. */
export async function listAccounts(db: Queryable): Promise<Account[]> {
  return db.query<Account>('select id, name, created_at from accounts order by created_at, id');
}
