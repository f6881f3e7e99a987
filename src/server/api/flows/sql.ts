/** SQL for flows: drafts and live flows of a site, with the trigger key of API triggers indexed for the webhook fan-out. */
import type { Queryable } from '../../db/db';
import { newId } from '../../db/ids';
import type { PageRequest, PageResult } from '../../http/pagination';
import { selectPageBySeq } from '../../db/keyset';
import { writeNoted } from '../../db/table-changes';

export type FlowStatus = 'draft' | 'live';

export interface FlowRow {
  id: string;
  account_id: string;
  site_id: string;
  name: string;
  trigger_config: Record<string, unknown>;
  actions_config: Record<string, unknown>[];
  status: FlowStatus;
  trigger_key: string | null;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
}

const COLUMNS =
  'id, account_id, site_id, name, trigger_config, actions_config, status, trigger_key, created_at, updated_at, published_at';

/** What a flow is made of. */
export interface FlowFields {
  name: string;
  triggerConfig: Record<string, unknown>;
  actionsConfig: Record<string, unknown>[];
  /** The API trigger's key, or null for other triggers. */
  triggerKey: string | null;
}

/** A write to flows, noted before and after (see table-changes.ts: the webhook's cache of live flows). */
const writeFlows = (db: Queryable, sql: string, params: readonly unknown[]) => writeNoted<FlowRow>(db, 'flows', sql, params);

/** Creates a draft flow. */
export async function insertFlow(db: Queryable, accountId: string, siteId: string, fields: FlowFields): Promise<FlowRow> {
  const [row] = await writeFlows(db,
    `insert into flows (id, account_id, site_id, name, trigger_config, actions_config, trigger_key)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
    [newId('flow'), accountId, siteId, fields.name, JSON.stringify(fields.triggerConfig), JSON.stringify(fields.actionsConfig), fields.triggerKey],
  );
  return row!;
}

/** A flow of an account by id, or null. */
export async function findFlow(db: Queryable, accountId: string, id: string): Promise<FlowRow | null> {
  const [row] = await db.query<FlowRow>(`select ${COLUMNS} from flows where account_id = $1 and id = $2`, [accountId, id]);
  return row ?? null;
}

/** Flows of an account by id, in one statement (ids of no flow of the account are left out). */
export async function findFlows(db: Queryable, accountId: string, ids: readonly string[]): Promise<FlowRow[]> {
  if (ids.length === 0) return [];
  return db.query<FlowRow>(`select ${COLUMNS} from flows where account_id = $1 and id = any($2::text[]) order by seq`, [accountId, [...ids]]);
}

/** A flow of an account by id, locked for the rest of the transaction (publish validates and flips it atomically). */
export async function lockFlow(tx: Queryable, accountId: string, id: string): Promise<FlowRow | null> {
  const [row] = await tx.query<FlowRow>(`select ${COLUMNS} from flows where account_id = $1 and id = $2 for update`, [accountId, id]);
  return row ?? null;
}

/** One page of an account's flows in creation order, optionally of one site. */
export async function listFlowsPage(
  db: Queryable,
  accountId: string,
  filters: { siteId?: string | undefined },
  request: PageRequest,
): Promise<PageResult<FlowRow>> {
  return selectPageBySeq<FlowRow>(db, { table: 'flows', columns: COLUMNS, accountId, filters: { site_id: filters.siteId } }, request);
}

/**
 * Changes a flow's fields; absent fields are kept. `onlyStatus` guards the write (a draft-only edit must not land on a
 * flow published meanwhile). Null when no flow of the account with that id (and status) exists.
 */
export async function updateFlow(
  db: Queryable,
  accountId: string,
  id: string,
  patch: Partial<FlowFields>,
  onlyStatus?: FlowStatus,
): Promise<FlowRow | null> {
  const triggerChanged = patch.triggerConfig !== undefined;
  const [row] = await writeFlows(db,
    `update flows set
       name = coalesce($3::text, name),
       trigger_config = coalesce($4::jsonb, trigger_config),
       actions_config = coalesce($5::jsonb, actions_config),
       trigger_key = case when $6::boolean then $7::text else trigger_key end,
       updated_at = now()
     where account_id = $1 and id = $2 and ($8::text is null or status = $8::text) returning ${COLUMNS}`,
    [
      accountId, id, patch.name ?? null,
      patch.triggerConfig ? JSON.stringify(patch.triggerConfig) : null,
      patch.actionsConfig ? JSON.stringify(patch.actionsConfig) : null,
      triggerChanged, patch.triggerKey ?? null, onlyStatus ?? null,
    ],
  );
  return row ?? null;
}

/** A flow action's config of one destination type, with its flow's name and status. */
export interface FlowActionConfig {
  flow_id: string;
  flow_name: string;
  status: FlowStatus;
  config: Record<string, unknown>;
}

/** The configs of every action of the account's flows (draft and live) that sends to `integrationId`, live flows first. */
export async function actionConfigsOf(db: Queryable, accountId: string, integrationId: string): Promise<FlowActionConfig[]> {
  return db.query<FlowActionConfig>(
    `select f.id as flow_id, f.name as flow_name, f.status, a -> 'config' as config
     from flows f cross join lateral jsonb_array_elements(f.actions_config) as a
     where f.account_id = $1 and a ->> 'integrationId' = $2 and jsonb_typeof(a -> 'config') = 'object'
     order by f.status = 'live' desc, f.seq`,
    [accountId, integrationId],
  );
}

/** Moves a flow from one status to the other (publish: draft to live; unpublish: live to draft). Null when it was not in `from`. */
export async function transitionFlow(db: Queryable, accountId: string, id: string, from: FlowStatus, to: FlowStatus): Promise<FlowRow | null> {
  const [row] = await writeFlows(db,
    `update flows set status = $4::text, updated_at = now(),
       published_at = case when $4::text = 'live' then now() else null end
     where account_id = $1 and id = $2 and status = $3 returning ${COLUMNS}`,
    [accountId, id, from, to],
  );
  return row ?? null;
}

/**
 * The distinct trigger keys of a site's API-trigger flows (drafts included), each with its kind (a signup's key or a
 * later stage's), signups first: for the hosted trigger source page.
 */
export async function triggerKeysOfSite(db: Queryable, siteId: string): Promise<Array<{ key: string; type: 'saas_signup' | 'conversion' }>> {
  return db.query<{ key: string; type: 'saas_signup' | 'conversion' }>(
    `select distinct trigger_key as key,
       case when trigger_config ->> 'type' = 'conversion' then 'conversion' else 'saas_signup' end as type
     from flows where site_id = $1 and trigger_key is not null order by type desc, key`,
    [siteId],
  );
}

/** The trigger_config of every live flow of a site that is not an API trigger (those have a trigger_key), oldest first. */
export async function liveFormTriggerConfigs(db: Queryable, siteId: string): Promise<Record<string, unknown>[]> {
  // Served by the partial index flows_site_trigger (site_id, trigger_key) where status = 'live'.
  const rows = await db.query<{ trigger_config: Record<string, unknown> }>(
    `select trigger_config from flows where site_id = $1 and status = 'live' and trigger_key is null order by seq`,
    [siteId],
  );
  return rows.map((row) => row.trigger_config);
}

/** The live flows of a site with a form trigger (no trigger key), oldest first: what a form submission may fire. */
export async function liveFormFlows(db: Queryable, siteId: string): Promise<FlowRow[]> {
  return db.query<FlowRow>(
    `select ${COLUMNS} from flows where site_id = $1 and status = 'live' and trigger_key is null order by seq`,
    [siteId],
  );
}

/** The live flows of a site of an account, oldest first (what publishing another flow of it is compared with). */
export async function liveFlowsOfSite(db: Queryable, accountId: string, siteId: string): Promise<FlowRow[]> {
  return db.query<FlowRow>(
    `select ${COLUMNS} from flows where account_id = $1 and site_id = $2 and status = 'live' order by seq`,
    [accountId, siteId],
  );
}
