/** SQL for connections to ad platforms: one per (account, type), replaced by a later connect; credentials sealed. */
import type { Queryable } from '../db/db';
import { newId } from '../db/ids';
import { selectPageBySeq } from '../db/keyset';
import type { PageRequest, PageResult } from '../http/pagination';

/** Whether a connection can deliver, or waits for the user to authorize it again (its platform refused the refresh token). */
export type ConnectionStatus = 'connected' | 'reauthorization_required';

/** A connection without its credentials. */
export interface DestinationRow {
  id: string;
  account_id: string;
  type: string;
  settings: Record<string, unknown>;
  status: ConnectionStatus;
  connected_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** A connection with its sealed credentials (never returned by any API). */
export interface ConnectionRow extends DestinationRow {
  credentials: string | null;
}

const COLUMNS = 'id, account_id, type, settings, status, connected_at, created_at, updated_at';

/** Connects a destination for an account, or replaces the one already connected (settings, credentials, status). */
export async function upsertDestination(
  db: Queryable,
  accountId: string,
  type: string,
  settings: Record<string, unknown>,
  sealedCredentials: string | null = null,
): Promise<DestinationRow> {
  const [row] = await db.query<DestinationRow>(
    `insert into destinations (id, account_id, type, settings, credentials) values ($1, $2, $3, $4, $5)
     on conflict (account_id, type) do update set settings = excluded.settings, credentials = excluded.credentials,
       status = 'connected', connected_at = now(), updated_at = now()
     returning ${COLUMNS}`,
    [newId('dst'), accountId, type, JSON.stringify(settings), sealedCredentials],
  );
  return row!;
}

/** The types of the destinations connected for an account. */
export async function connectedDestinationTypes(db: Queryable, accountId: string): Promise<Set<string>> {
  const rows = await db.query<{ type: string }>('select type from destinations where account_id = $1', [accountId]);
  return new Set(rows.map((r) => r.type));
}

/** The stored (non-secret) settings of an account's destination of a type, or null when none is connected. */
export async function destinationSettings(db: Queryable, accountId: string, type: string): Promise<Record<string, unknown> | null> {
  const [row] = await db.query<{ settings: Record<string, unknown> }>(
    'select settings from destinations where account_id = $1 and type = $2',
    [accountId, type],
  );
  return row?.settings ?? null;
}

/** The connections of an account, oldest first (the order GET /v1/destinations pages through), without credentials. */
export async function listDestinations(db: Queryable, accountId: string): Promise<DestinationRow[]> {
  return db.query<DestinationRow>(`select ${COLUMNS} from destinations where account_id = $1 order by seq`, [accountId]);
}

/** One page of an account's connections, oldest first, without credentials (GET /v1/destinations). */
export async function listDestinationsPage(db: Queryable, accountId: string, request: PageRequest): Promise<PageResult<DestinationRow>> {
  return selectPageBySeq<DestinationRow>(db, { table: 'destinations', columns: COLUMNS, accountId }, request);
}

/** An account's connection of a type, with its sealed credentials, or null. */
export async function findConnection(db: Queryable, accountId: string, type: string): Promise<ConnectionRow | null> {
  const [row] = await db.query<ConnectionRow>(
    `select ${COLUMNS}, credentials from destinations where account_id = $1 and type = $2`,
    [accountId, type],
  );
  return row ?? null;
}

/** Connections by id, with their sealed credentials. */
export async function findConnectionsById(db: Queryable, ids: readonly string[]): Promise<Map<string, ConnectionRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<ConnectionRow>(`select ${COLUMNS}, credentials from destinations where id = any($1::text[])`, [ids]);
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * What became of a write a send asked for on the credentials it was loaded with: `written`; `unchanged` (already in
 * that state, e.g. another worker marked the same refusal first, or the connection is gone); or `replaced`: a new
 * handoff stored other credentials meanwhile, so the send's view is stale and nothing was written.
 */
export type GuardedWrite = 'written' | 'unchanged' | 'replaced';

/**
 * `credentials` still what a send loaded (`used`: the sealed value, each seal being unique). `undefined` skips the
 * check (a connection not loaded from its row).
 */
function sameCredentials(used: string | null | undefined, param: string): string {
  return used === undefined ? 'true' : `credentials is not distinct from ${param}::text`;
}

async function classify(db: Queryable, id: string, used: string | null | undefined): Promise<GuardedWrite> {
  if (used === undefined) return 'unchanged';
  const [row] = await db.query<{ same: boolean }>('select credentials is not distinct from $2::text as same from destinations where id = $1', [id, used]);
  return row && !row.same ? 'replaced' : 'unchanged';
}

/**
 * Marks a connection as needing a new authorization; its conversions wait until a new handoff connects it. `written`
 * when it was `connected` with the credentials the refused send used (`used`) until now, so one refusal seen by
 * several workers tells the account once, and a send that started before a reconnect never marks the new grant.
 */
export async function markReauthorizationRequired(db: Queryable, id: string, used?: string | null): Promise<GuardedWrite> {
  const rows = await db.query<{ id: string }>(
    `update destinations set status = 'reauthorization_required', updated_at = now()
     where id = $1 and status <> 'reauthorization_required' and ${sameCredentials(used, '$2')} returning id`,
    used === undefined ? [id] : [id, used],
  );
  return rows.length > 0 ? 'written' : classify(db, id, used);
}

/**
 * Marks a connection `connected` again when the credentials a connection test proved working (`used`) are still the
 * stored ones; `written` when it was `reauthorization_required` until now.
 */
export async function markConnectedAgain(db: Queryable, id: string, used: string | null): Promise<GuardedWrite> {
  const rows = await db.query<{ id: string }>(
    `update destinations set status = 'connected', updated_at = now()
     where id = $1 and status = 'reauthorization_required' and credentials is not distinct from $2::text returning id`,
    [id, used],
  );
  return rows.length > 0 ? 'written' : classify(db, id, used);
}

/**
 * Replaces a connection's sealed credentials (a rotated refresh token) when they are still those the refresh started
 * from (`used`): a rotation of an old grant never overwrites what a new handoff stored meanwhile.
 */
export async function replaceCredentials(db: Queryable, id: string, sealedCredentials: string | null, used?: string | null): Promise<GuardedWrite> {
  const rows = await db.query<{ id: string }>(
    `update destinations set credentials = $2, updated_at = now() where id = $1 and ${sameCredentials(used, '$3')} returning id`,
    used === undefined ? [id, sealedCredentials] : [id, sealedCredentials, used],
  );
  return rows.length > 0 ? 'written' : classify(db, id, used);
}
