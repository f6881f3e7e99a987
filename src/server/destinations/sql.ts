/** SQL for connected destinations: one per (account, type), replaced by a later connect. */
import type { Queryable } from '../db/db';
import { newId } from '../db/ids';

/** A destination row without its settings (which hold credentials). */
export interface DestinationRow {
  id: string;
  account_id: string;
  type: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, account_id, type, created_at, updated_at';

/** Connects a destination for an account, or replaces the settings of the one already connected. */
export async function upsertDestination(
  db: Queryable,
  accountId: string,
  type: string,
  settings: Record<string, unknown>,
): Promise<DestinationRow> {
  const [row] = await db.query<DestinationRow>(
    `insert into destinations (id, account_id, type, settings) values ($1, $2, $3, $4)
     on conflict (account_id, type) do update set settings = excluded.settings, updated_at = now()
     returning ${COLUMNS}`,
    [newId('dst'), accountId, type, JSON.stringify(settings)],
  );
  return row!;
}

/** The types of the destinations connected for an account. */
export async function connectedDestinationTypes(db: Queryable, accountId: string): Promise<Set<string>> {
  const rows = await db.query<{ type: string }>('select type from destinations where account_id = $1', [accountId]);
  return new Set(rows.map((r) => r.type));
}

/** The stored settings of an account's destination of a type, or null when none is connected. */
export async function destinationSettings(db: Queryable, accountId: string, type: string): Promise<Record<string, unknown> | null> {
  const [row] = await db.query<{ settings: Record<string, unknown> }>(
    'select settings from destinations where account_id = $1 and type = $2',
    [accountId, type],
  );
  return row?.settings ?? null;
}
