/** Flows: created as drafts, published after validation (live flows deliver), unpublished back to draft. */
import type { Database, Queryable } from '../../db/db';
import { findSite } from '../sites';
import { findTriggerSource } from '../../webhook';
import { findFlow, findFlows, insertFlow, liveFlowsOfSite, lockFlow, listFlowsPage, transitionFlow, updateFlow, type FlowFields, type FlowRow } from './sql';
import { flowOverlaps, overlapMessage } from './overlaps';
import { ApiError, invalidParam, notFound } from '../../http/errors';
import { paginate, pageRequestOf, type ListEnvelope } from '../../http/pagination';
import type { JsonObject } from '../../http/input';
import { requireSite } from '../sites';
import { destinationSettings, platformFor, supportedDestinationTypes, type Problem } from '../../destinations';
import { actionsProblems, eventTriggerOf, sizeProblems, triggerKeyOf, triggerProblems } from './flow-config';
import type { ActionsConfig, CreateFlowBody, ListFlowsQuery, PatchFlowBody, TriggerConfig } from './schemas';

export { FLOW_NAME_MAX } from './schemas';

/** The Flow record: the spec's fields plus status and timestamps. */
export interface FlowRecord {
  id: string;
  site_id: string;
  name: string;
  trigger_config: Record<string, unknown>;
  actions_config: Record<string, unknown>[];
  status: 'draft' | 'live';
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

/** The API view of a stored flow. */
export function toFlowRecord(row: FlowRow): FlowRecord {
  return {
    id: row.id,
    site_id: row.site_id,
    name: row.name,
    trigger_config: row.trigger_config,
    actions_config: row.actions_config,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    published_at: row.published_at ? row.published_at.toISOString() : null,
  };
}

/** 400 `flow_invalid`: names the first problem in message and param, and lists them all in `errors`. */
export class FlowInvalidError extends ApiError {
  constructor(readonly problems: Problem[]) {
    const first = problems[0]!;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''}, see errors)` : '';
    super(400, 'invalid_request_error', 'flow_invalid', `The flow cannot be published: ${first.message}${more}`, first.param);
  }

  override toBody() {
    const body = super.toBody();
    return { error: { ...body.error, errors: this.problems } };
  }
}

function firstProblemAsError(problems: Problem[]): void {
  const first = problems[0];
  if (first) throw invalidParam(first.param, first.message);
}

async function requireFlow(db: Queryable, accountId: string, id: string): Promise<FlowRow> {
  const flow = await findFlow(db, accountId, id);
  if (!flow) throw notFound('flow', id);
  return flow;
}

/** A (schema-checked) trigger_config and actions_config as stored, with the API trigger's key; refused when too large. */
function configFields(trigger: TriggerConfig | undefined, actions: ActionsConfig | undefined): Partial<FlowFields> {
  const fields: Partial<FlowFields> = {};
  if (trigger !== undefined) {
    firstProblemAsError(sizeProblems(trigger, 'trigger_config'));
    fields.triggerConfig = trigger as JsonObject;
    fields.triggerKey = triggerKeyOf(fields.triggerConfig);
  }
  if (actions !== undefined) {
    firstProblemAsError(sizeProblems(actions, 'actions_config'));
    fields.actionsConfig = actions as JsonObject[];
  }
  return fields;
}

/** POST /v1/flows: a draft flow of a site of the account. Nothing is delivered until it is published. */
export async function createFlow(db: Queryable, accountId: string, body: CreateFlowBody): Promise<FlowRecord> {
  const configs = configFields(body.trigger_config, body.actions_config) as Required<Pick<FlowFields, 'triggerConfig' | 'actionsConfig' | 'triggerKey'>>;
  const site = await requireSite(db, accountId, body.site_id, 'site_id');
  return toFlowRecord(await insertFlow(db, accountId, site.id, { name: body.name.trim(), ...configs }));
}

/** GET /v1/flows: the account's flows in creation order, paginated; `site_id` filters by site. */
export async function listFlows(db: Queryable, accountId: string, query: ListFlowsQuery): Promise<ListEnvelope<FlowRecord>> {
  const request = pageRequestOf(query);
  const siteId = query.site_id;
  if (siteId !== undefined) await requireSite(db, accountId, siteId, 'site_id');
  return paginate(request, (r) => listFlowsPage(db, accountId, { siteId }, r), toFlowRecord);
}

/** GET /v1/flows/{id}. */
export async function getFlow(db: Queryable, accountId: string, id: string): Promise<FlowRecord> {
  return toFlowRecord(await requireFlow(db, accountId, id));
}

/**
 * PATCH /v1/flows/{id}: name, trigger_config, actions_config. A live flow may only be renamed: what it delivers
 * changes only through unpublish, edit, publish, so a live flow never runs an unvalidated configuration.
 */
export async function patchFlow(db: Queryable, accountId: string, id: string, body: PatchFlowBody): Promise<FlowRecord> {
  const patch: Partial<FlowFields> = configFields(body.trigger_config, body.actions_config);
  if (body.name !== undefined) patch.name = body.name.trim();
  const flow = await requireFlow(db, accountId, id);
  const changesConfig = patch.triggerConfig !== undefined || patch.actionsConfig !== undefined;
  if (flow.status === 'live' && changesConfig) throw flowIsLive(id);
  const row = await updateFlow(db, accountId, id, patch, changesConfig ? 'draft' : undefined);
  // Published between our read and the guarded write: same answer as if we had seen it live.
  if (!row) throw flowIsLive(id);
  return toFlowRecord(row);
}

function flowIsLive(id: string): ApiError {
  return new ApiError(
    409,
    'conflict_error',
    'flow_live',
    `Flow ${id} is live: only its name can change. Unpublish it (POST /v1/flows/${id}/unpublish), edit it, then publish it again.`,
  );
}

/**
 * What the publish checks read, each read once however many flows ask (one page of the dashboard checks every draft
 * of the account: without it, three to five statements a draft, which a delivery burst's statements delay).
 */
class PublishLookups {
  readonly #db: Queryable;
  readonly #read = new Map<string, Promise<unknown>>();

  constructor(db: Queryable) {
    this.#db = db;
  }

  #once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let found = this.#read.get(key) as Promise<T> | undefined;
    if (!found) this.#read.set(key, (found = read()));
    return found;
  }

  site(accountId: string, siteId: string) {
    return this.#once(`site\0${accountId}\0${siteId}`, () => findSite(this.#db, accountId, siteId));
  }

  apiTriggerSource(accountId: string, siteId: string) {
    return this.#once(`trigger\0${accountId}\0${siteId}`, () => findTriggerSource(this.#db, accountId, siteId, 'api'));
  }

  destination(accountId: string, type: string) {
    return this.#once(`destination\0${accountId}\0${type}`, () => destinationSettings(this.#db, accountId, type));
  }
}

/** Everything that keeps a flow from going live, in the order a user would fix it. */
export async function publishProblems(db: Queryable, flow: FlowRow, lookups = new PublishLookups(db)): Promise<Problem[]> {
  const problems: Problem[] = [];
  const site = await lookups.site(flow.account_id, flow.site_id);
  if (!site) problems.push({ param: 'site_id', message: `the flow's site ${flow.site_id} no longer exists.` });
  const triggerIssues = triggerProblems(flow.trigger_config);
  problems.push(...triggerIssues);
  const key = triggerIssues.length === 0 ? triggerKeyOf(flow.trigger_config) : null;
  if (key !== null && site && !(await lookups.apiTriggerSource(flow.account_id, site.id))) {
    problems.push({
      param: 'trigger_config',
      message: `no API trigger source is connected for site ${site.id}: complete a connect_trigger_source handoff for it first.`,
    });
  }
  const actionIssues = actionsProblems(flow.actions_config);
  problems.push(...actionIssues);
  if (actionIssues.length > 0) return problems;
  for (const [i, action] of flow.actions_config.entries()) {
    const at = `actions_config[${i}]`;
    const type = action.integrationId as string;
    const kind = platformFor(type);
    if (!kind) {
      problems.push({
        param: `${at}.integrationId`,
        message: `${at}.integrationId '${type}' is not a supported destination; supported: ${supportedDestinationTypes().join(', ')}.`,
      });
      continue;
    }
    const settings = await lookups.destination(flow.account_id, type);
    if (!settings) {
      problems.push({
        param: `${at}.integrationId`,
        message: `${kind.label} is not connected for this account: complete a connect_destination handoff with destination_type ${type} first.`,
      });
      continue;
    }
    problems.push(...kind.checkAction(action.config as JsonObject, `${at}.config`, eventTriggerOf(flow.trigger_config)));
  }
  return problems;
}

/** What keeps a flow of the account from going live now (empty: publishing succeeds), as publish would say it. */
export async function flowPublishProblems(db: Queryable, accountId: string, id: string): Promise<Problem[]> {
  const flow = await requireFlow(db, accountId, id);
  return flow.status === 'live' ? [] : publishProblems(db, flow);
}

/**
 * flowPublishProblems of several flows of the account at once: the flows in one statement, each site, trigger source
 * and destination read once. A flow not found (deleted meanwhile) or live has none.
 */
export async function flowsPublishProblems(db: Queryable, accountId: string, ids: readonly string[]): Promise<Map<string, Problem[]>> {
  const lookups = new PublishLookups(db);
  const found = new Map<string, Problem[]>(ids.map((id) => [id, []]));
  for (const flow of await findFlows(db, accountId, ids)) {
    if (flow.status !== 'live') found.set(flow.id, await publishProblems(db, flow, lookups));
  }
  return found;
}

/** Something a published flow does that its owner likely did not mean (it is live all the same). */
export interface FlowWarning {
  code: 'double_counted';
  /** The other flow concerned. */
  flow_id: string;
  message: string;
}

/** The live flow with what it does that its owner likely did not mean (publish's answer). */
export interface PublishedFlowRecord extends FlowRecord {
  warnings: FlowWarning[];
}

/** The warnings of a flow against the other live flows of its site (a draft: what publishing it would do). */
export async function flowWarnings(db: Queryable, flow: FlowRow): Promise<FlowWarning[]> {
  const live = await liveFlowsOfSite(db, flow.account_id, flow.site_id);
  return flowOverlaps(flow, live).map((overlap) => ({
    code: 'double_counted' as const,
    flow_id: overlap.flowId,
    message: overlapMessage([overlap], flow.status === 'live'),
  }));
}

/**
 * POST /v1/flows/{id}/publish: validates and makes the flow live; a live flow is answered as it is. The flow row is
 * locked while it is checked, so an edit cannot slip in between the check and the switch. The answer's `warnings`
 * name the live flows that send the same conversions where a platform counts them twice.
 */
export async function publishFlow(db: Database, accountId: string, id: string): Promise<PublishedFlowRecord> {
  return db.transaction(async (tx) => {
    const flow = await lockFlow(tx, accountId, id);
    if (!flow) throw notFound('flow', id);
    if (flow.status === 'live') return { ...toFlowRecord(flow), warnings: await flowWarnings(tx, flow) };
    const problems = await publishProblems(tx, flow);
    if (problems.length > 0) throw new FlowInvalidError(problems);
    const published = (await transitionFlow(tx, accountId, id, 'draft', 'live'))!;
    return { ...toFlowRecord(published), warnings: await flowWarnings(tx, published) };
  });
}

/** POST /v1/flows/{id}/unpublish: back to draft (delivers nothing); a draft is answered as it is. */
export async function unpublishFlow(db: Queryable, accountId: string, id: string): Promise<FlowRecord> {
  const flow = await requireFlow(db, accountId, id);
  if (flow.status === 'draft') return toFlowRecord(flow);
  const row = (await transitionFlow(db, accountId, id, 'live', 'draft')) ?? (await requireFlow(db, accountId, id));
  return toFlowRecord(row);
}
