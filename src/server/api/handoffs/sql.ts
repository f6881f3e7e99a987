/** SQL for handoffs: a hosted authorization step, reached through an unguessable token. */
import type { Queryable } from '../../db/db';
import { newId, newUrlToken } from '../../db/ids';

export type HandoffPurpose = 'connect_destination' | 'connect_trigger_source';
export type HandoffStatus = 'pending' | 'completed';

export interface HandoffRow {
  id: string;
  account_id: string;
  purpose: HandoffPurpose;
  destination_type: string | null;
  trigger_source: string | null;
  site_id: string | null;
  token: string;
  status: HandoffStatus;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = 'id, account_id, purpose, destination_type, trigger_source, site_id, token, status, created_at, completed_at';

/** Creates a pending handoff with a fresh token. */
export async function insertHandoff(
  db: Queryable,
  fields: { accountId: string; purpose: HandoffPurpose; destinationType: string | null; triggerSource: string | null; siteId: string | null },
): Promise<HandoffRow> {
  const [row] = await db.query<HandoffRow>(
    `insert into handoffs (id, account_id, purpose, destination_type, trigger_source, site_id, token)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
    [newId('hdf'), fields.accountId, fields.purpose, fields.destinationType, fields.triggerSource, fields.siteId, newUrlToken()],
  );
  return row!;
}

/** A handoff of an account by id, or null. */
export async function findHandoff(db: Queryable, accountId: string, id: string): Promise<HandoffRow | null> {
  const [row] = await db.query<HandoffRow>(`select ${COLUMNS} from handoffs where account_id = $1 and id = $2`, [accountId, id]);
  return row ?? null;
}

/** A handoff by its url token (the hosted page), or null. */
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

export async function findHandoffByToken(db: Queryable, token: string): Promise<HandoffRow | null> {
  const [row] = await db.query<HandoffRow>(`select ${COLUMNS} from handoffs where token = $1`, [token]);
  return row ?? null;
}

/**
 * Marks a pending handoff completed and returns it; null when it was not pending (already completed, perhaps by a
 * concurrent request). Run it first in the completing transaction: the row lock makes exactly one completion win.
 */
export async function claimPendingHandoff(tx: Queryable, token: string, result: Record<string, unknown>): Promise<HandoffRow | null> {
  const [row] = await tx.query<HandoffRow>(
    `update handoffs set status = 'completed', completed_at = now(), result = $2
     where token = $1 and status = 'pending' and created_at > now() - $3 * interval '1 millisecond' returning ${COLUMNS}`,
    [token, JSON.stringify(result), HANDOFF_TTL_MS],
  );
  return row ?? null;
}

/** Starts the OAuth step of a pending handoff: the state the callback will name and the sealed PKCE verifier. */
export async function startHandoffOAuth(db: Queryable, token: string, state: string, sealedVerifier: string): Promise<boolean> {
  const rows = await db.query(
    `update handoffs set oauth_state = $2, oauth_verifier = $3 where token = $1 and status = 'pending' returning id`,
    [token, state, sealedVerifier],
  );
  return rows.length > 0;
}

/** The pending handoff an OAuth callback's state belongs to, with its sealed verifier; null for an unknown state. */
export async function findHandoffByOAuthState(db: Queryable, state: string): Promise<(HandoffRow & { oauth_verifier: string | null }) | null> {
  const [row] = await db.query<HandoffRow & { oauth_verifier: string | null }>(
    `select ${COLUMNS}, oauth_verifier from handoffs where oauth_state = $1 and status = 'pending'`,
    [state],
  );
  return row ?? null;
}

/** Records the sealed grant (refresh token) of a completed OAuth step; the state cannot be used twice. */
export async function recordHandoffGrant(db: Queryable, id: string, sealedGrant: string): Promise<void> {
  await db.query(`update handoffs set oauth_grant = $2, oauth_state = null, oauth_verifier = null where id = $1`, [id, sealedGrant]);
}

/** The sealed OAuth grant of a handoff, or null when its OAuth step is not done. */
export async function handoffGrant(db: Queryable, id: string): Promise<string | null> {
  const [row] = await db.query<{ oauth_grant: string | null }>('select oauth_grant from handoffs where id = $1', [id]);
  return row?.oauth_grant ?? null;
}
