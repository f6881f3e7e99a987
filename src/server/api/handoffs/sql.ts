/**
 * SQL for handoffs: a hosted authorization step, reached through an unguessable token. The token is a credential for a
 * day, so the store holds it sealed with the service key (`token`) and found by its SHA-256 (`token_hash`), as API keys:
 * a backup never holds a live link. A row's `token` here is the opened one, or null when it does not open with this key.
 */
import type { Queryable } from '../../db/db';
import { hashSecret, newId, newUrlToken } from '../../db/ids';
import { openedOrNull, sealValuesStoredInClear, type SecretBox } from '../../db/secret-box';

export type HandoffPurpose = 'connect_destination' | 'connect_trigger_source';
export type HandoffStatus = 'pending' | 'completed';

export interface HandoffRow {
  id: string;
  account_id: string;
  purpose: HandoffPurpose;
  destination_type: string | null;
  trigger_source: string | null;
  site_id: string | null;
  /** The url token, opened; null when it was sealed under another CNV_SECRET_KEY. */
  token: string | null;
  status: HandoffStatus;
  created_at: Date;
  completed_at: Date | null;
}

/** A handoff reached by its url token (the hosted page): its token is the one given. */
export type HostedHandoffRow = HandoffRow & { token: string };

/** A row as stored: token sealed. */
type StoredHandoffRow = Omit<HandoffRow, 'token'> & { token: string };

const COLUMNS = 'id, account_id, purpose, destination_type, trigger_source, site_id, token, status, created_at, completed_at';

/** The token a handoff is looked up by: SHA-256 hex, as migration 29 computes it for the rows before it. */
const tokenHash = hashSecret;

/** A stored row with its sealed token opened (null when it does not open with this key). */
function opened(box: SecretBox, row: StoredHandoffRow): HandoffRow {
  return { ...row, token: openedOrNull(box, row.token) };
}

/** Creates a pending handoff with a fresh token (stored sealed, found by its hash). */
export async function insertHandoff(
  db: Queryable,
  box: SecretBox,
  fields: { accountId: string; purpose: HandoffPurpose; destinationType: string | null; triggerSource: string | null; siteId: string | null },
): Promise<HostedHandoffRow> {
  const token = newUrlToken();
  const [row] = await db.query<StoredHandoffRow>(
    `insert into handoffs (id, account_id, purpose, destination_type, trigger_source, site_id, token, token_hash)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${COLUMNS}`,
    [newId('hdf'), fields.accountId, fields.purpose, fields.destinationType, fields.triggerSource, fields.siteId, box.seal(token), tokenHash(token)],
  );
  return { ...row!, token };
}

/** A handoff of an account by id, or null. */
export async function findHandoff(db: Queryable, box: SecretBox, accountId: string, id: string): Promise<HandoffRow | null> {
  const [row] = await db.query<StoredHandoffRow>(`select ${COLUMNS} from handoffs where account_id = $1 and id = $2`, [accountId, id]);
  return row ? opened(box, row) : null;
}

/**
 * How long a handoff's link works: a day. A link is a credential (whoever holds it may connect a destination for the
 * account or get a new webhook secret), and it travels by chat and email and through agents' transcripts; one not used
 * within a day is dead, and a new handoff gives a fresh one.
 */
export const HANDOFF_TTL_MS = 24 * 60 * 60 * 1000;

/** Whether a handoff was left pending past its link's lifetime. */
export function handoffExpired(row: Pick<HandoffRow, 'status' | 'created_at'>, now: Date = new Date()): boolean {
  return row.status === 'pending' && now.getTime() - row.created_at.getTime() > HANDOFF_TTL_MS;
}

/** A handoff by its url token (the hosted page), or null. */
export async function findHandoffByToken(db: Queryable, token: string): Promise<HostedHandoffRow | null> {
  const [row] = await db.query<StoredHandoffRow>(`select ${COLUMNS} from handoffs where token_hash = $1`, [tokenHash(token)]);
  return row ? { ...row, token } : null;
}

/**
 * Marks a pending handoff completed and returns it; null when it was not pending (already completed, perhaps by a
 * concurrent request). Run it first in the completing transaction: the row lock makes exactly one completion win.
 */
export async function claimPendingHandoff(tx: Queryable, token: string, result: Record<string, unknown>): Promise<HostedHandoffRow | null> {
  const [row] = await tx.query<StoredHandoffRow>(
    `update handoffs set status = 'completed', completed_at = now(), result = $2
     where token_hash = $1 and status = 'pending' and created_at > now() - $3 * interval '1 millisecond' returning ${COLUMNS}`,
    [tokenHash(token), JSON.stringify(result), HANDOFF_TTL_MS],
  );
  return row ? { ...row, token } : null;
}

/**
 * Whether a connect_destination handoff of the same account and platform, created after `handoffId`, has completed:
 * then `handoffId` is superseded, and completing it would replace the newer one's connection with an older sign-in.
 * In a transaction, `lockAccount` first makes two completions of one account take turns (see completeDestinationHandoff).
 */
export async function newerHandoffCompleted(db: Queryable, handoffId: string): Promise<boolean> {
  const rows = await db.query(
    `select 1 from handoffs h join handoffs mine on mine.id = $1
     where h.account_id = mine.account_id and h.purpose = 'connect_destination' and h.destination_type = mine.destination_type
       and h.status = 'completed' and h.seq > mine.seq
     limit 1`,
    [handoffId],
  );
  return rows.length > 0;
}

/**
 * Locks the account's row until the transaction ends: completions of its destination handoffs take turns. `for no key
 * update`, which conflicts with itself but not with the key-share lock a foreign key check takes: rows that point at the
 * account (a webhook's events, say) are never held up by a completion.
 */
export async function lockAccount(tx: Queryable, accountId: string): Promise<void> {
  await tx.query('select id from accounts where id = $1 for no key update', [accountId]);
}

/** Starts the OAuth step of a pending handoff: the state the callback will name and the sealed PKCE verifier. */
export async function startHandoffOAuth(
  db: Queryable,
  token: string,
  state: string,
  sealedVerifier: string,
  choices: Readonly<Record<string, string>> = {},
): Promise<boolean> {
  const rows = await db.query(
    `update handoffs set oauth_state = $2, oauth_verifier = $3, oauth_choices = $4::jsonb
     where token_hash = $1 and status = 'pending' returning id`,
    [tokenHash(token), state, sealedVerifier, Object.keys(choices).length > 0 ? JSON.stringify(choices) : null],
  );
  return rows.length > 0;
}

/** The pending handoff an OAuth callback's state belongs to, with its sealed verifier; null for an unknown state. */
export async function findHandoffByOAuthState(
  db: Queryable,
  box: SecretBox,
  state: string,
): Promise<(HandoffRow & { oauth_verifier: string | null }) | null> {
  const [row] = await db.query<StoredHandoffRow & { oauth_verifier: string | null }>(
    `select ${COLUMNS}, oauth_verifier from handoffs where oauth_state = $1 and status = 'pending'`,
    [state],
  );
  return row ? { ...opened(box, row), oauth_verifier: row.oauth_verifier } : null;
}

/** Records the sealed grant (refresh token) of a completed OAuth step; the state cannot be used twice. */
export async function recordHandoffGrant(db: Queryable, id: string, sealedGrant: string): Promise<void> {
  await db.query(`update handoffs set oauth_grant = $2, oauth_state = null, oauth_verifier = null where id = $1`, [id, sealedGrant]);
}

/** What was chosen on a handoff's sign-in page before its last sign-in started (ConnectField.beforeSignIn); {} if nothing. */
export async function handoffSignInChoices(db: Queryable, id: string): Promise<Record<string, string>> {
  const [row] = await db.query<{ oauth_choices: unknown }>('select oauth_choices from handoffs where id = $1', [id]);
  const stored = row?.oauth_choices;
  const choices: Record<string, string> = {};
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return choices;
  for (const [name, value] of Object.entries(stored)) if (typeof value === 'string') choices[name] = value;
  return choices;
}

/** The sealed OAuth grant of a handoff, or null when its OAuth step is not done. */
export async function handoffGrant(db: Queryable, id: string): Promise<string | null> {
  const [row] = await db.query<{ oauth_grant: string | null }>('select oauth_grant from handoffs where id = $1', [id]);
  return row?.oauth_grant ?? null;
}

/** Handoff tokens at the start of the service: versions before migration 29 stored them in clear. Returns how many it sealed. */
export function sealHandoffTokensAtStart(db: Queryable, box: SecretBox): Promise<number> {
  return sealValuesStoredInClear(db, box, 'handoffs', 'token');
}
