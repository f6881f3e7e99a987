/**
 * Destinations through the API: the ad platform accounts connected by handoffs (type, status, account ids, when
 * connected; never a credential), and a test of a connection that records no conversion.
 */
import type { Database } from '../../db/db';
import type { Settings } from '../../settings';
import { serviceSecretBox } from '../../db/secret-box';
import { notFound } from '../../http/errors';
import { paginate, pageRequestOf, type ListEnvelope } from '../../http/pagination';
import { enqueueDestinationNotification, notifyReauthorizationRequired } from '../../notifications';
import { redeliverFailedOfDestination, resumeDeliveries } from '../../delivery';
import { actionConfigsOf, findFlow } from '../flows';
import { requireSite } from '../sites';
import { REDELIVER_LIMIT_MAX, type DestinationRedeliveryResult, type ListDestinationsQuery, type RedeliverDestinationBody } from './schemas';
import {
  AccessTokens,
  CredentialsUnreadable,
  OAuthClientRefused,
  ReauthorizationRequired,
  clientRefusals,
  TokenUnavailable,
  findConnectionsById,
  listDestinations,
  listDestinationsPage,
  markRecovered,
  platformFor,
  sendContextFor,
  toConnection,
  type ClientRefusal,
  type Connection,
  type ConnectionTestResult,
  type DestinationRow,
} from '../../destinations';

/** A destination as the API shows it. */
export interface DestinationRecord {
  id: string;
  /** The platform, e.g. `google-ads`. */
  type: string;
  label: string;
  /** `connected`, or `reauthorization_required` when the platform refused cnv's authorization (conversions wait). */
  status: string;
  /** The account ids the connection sends to (customer id, pixel id, …): settings, never credentials. */
  account: Record<string, unknown>;
  connected_at: string;
  created_at: string;
  /**
   * What holds its conversions back that is not the connection's to fix: the platform refuses this service's own OAuth
   * client (`oauth_client_refused`, the operator's settings named in `hint`), since `since`. Absent when nothing does.
   */
  problem?: { code: string; message: string; hint?: string; since: string };
}

function toRecord(row: DestinationRow, refusals: ReadonlyMap<string, ClientRefusal>): DestinationRecord {
  const refused = refusals.get(row.type);
  return {
    id: row.id,
    type: row.type,
    label: platformFor(row.type)?.label ?? row.type,
    status: row.status,
    account: row.settings,
    connected_at: row.connected_at.toISOString(),
    created_at: row.created_at.toISOString(),
    ...(refused
      ? {
          problem: {
            code: refused.error.code,
            // Only what needs a new access token from that client waits: a Reddit connection made with a pasted conversion
            // token never asks the client for one, and keeps sending.
            message: `${refused.error.message} Conversions that need a new access token through it wait (queued, nothing lost) and are sent once it works again.`,
            ...(refused.error.hint ? { hint: refused.error.hint } : {}),
            since: refused.since.toISOString(),
          },
        }
      : {}),
  };
}

/** GET /v1/destinations: a page of the account's connections, oldest first, paginated as every other list. */
export async function listDestinationRecords(db: Database, accountId: string, query: ListDestinationsQuery): Promise<ListEnvelope<DestinationRecord>> {
  const refusals = await clientRefusals(db);
  return paginate(pageRequestOf(query), (r) => listDestinationsPage(db, accountId, r), (row) => toRecord(row, refusals));
}

/** Every connection of the account, oldest first (the dashboard's Destinations page: one per platform at most). */
export async function allDestinationRecords(db: Database, accountId: string): Promise<DestinationRecord[]> {
  const refusals = await clientRefusals(db);
  return (await listDestinations(db, accountId)).map((row) => toRecord(row, refusals));
}

/** GET /v1/destinations/{id}. */
export async function getDestination(db: Database, accountId: string, id: string): Promise<DestinationRecord> {
  const row = (await listDestinations(db, accountId)).find((r) => r.id === id);
  if (!row) throw notFound('destination', id);
  return toRecord(row, await clientRefusals(db));
}

/**
 * POST /v1/destinations/{id}/redeliver: the destination's failed deliveries, sent again after the user fixed their
 * cause (see redeliverFailedOfDestination). site_id and flow_id must name the account's own, as in GET /v1/events.
 */
export async function redeliverDestination(
  db: Database,
  accountId: string,
  id: string,
  body: RedeliverDestinationBody = {},
): Promise<DestinationRedeliveryResult> {
  const destination = await getDestination(db, accountId, id);
  const siteId = body.site_id === undefined ? undefined : (await requireSite(db, accountId, body.site_id, 'site_id')).id;
  if (body.flow_id !== undefined && !(await findFlow(db, accountId, body.flow_id))) throw notFound('flow', body.flow_id, 'flow_id');
  const done = await redeliverFailedOfDestination(db, accountId, destination.type, {
    ...(siteId ? { siteId } : {}),
    ...(body.flow_id ? { flowId: body.flow_id } : {}),
    ...(body.occurred_after ? { occurredAfter: new Date(body.occurred_after) } : {}),
    limit: body.limit ?? REDELIVER_LIMIT_MAX,
  });
  return { destination: destination.id, events: done.events, actions: done.actions, has_more: done.hasMore };
}

/** At most this many flow actions are named by a connection test whose names they do not match. */
const UNMATCHED_SHOWN = 5;

/**
 * What a connection test adds when flow actions of the account name something the platform does not have (a Microsoft
 * conversion_name that is no goal's): each such flow and value, or '' when all match. The platform would drop or
 * refuse those conversions; the test is where the user looks first.
 */
async function unmatchedActions(db: Database, accountId: string, type: string, known: NonNullable<ConnectionTestResult['actionNames']>): Promise<string> {
  const names = new Set(known.names);
  const unmatched = (await actionConfigsOf(db, accountId, type)).filter((a) => {
    const value = a.config[known.field];
    return typeof value === 'string' && value.trim() !== '' && !names.has(value);
  });
  if (unmatched.length === 0) return '';
  const listed = unmatched.slice(0, UNMATCHED_SHOWN).map((a) => `flow '${a.flow_name}' (${a.status}) has ${known.field} '${String(a.config[known.field])}'`);
  const more = unmatched.length > UNMATCHED_SHOWN ? `, and ${unmatched.length - UNMATCHED_SHOWN} more` : '';
  return `But no ${known.what} has the name a flow action uses, so its conversions would not be accepted: ${listed.join('; ')}${more}. Correct the flow's ${known.field} (exact spelling, spaces and capitals) or create that ${known.what}.`;
}

/** POST /v1/destinations/{id}/test: asks the platform whether the connection works, without recording a conversion. */
export async function testDestination(
  db: Database,
  settings: Settings,
  accountId: string,
  id: string,
  conversionId?: string,
): Promise<ConnectionTestResult & { destination: string; warning?: string }> {
  const [row] = [...(await findConnectionsById(db, [id])).values()].filter((r) => r.account_id === accountId);
  const platform = row ? platformFor(row.type) : null;
  if (!row || !platform) throw notFound('destination', id);
  const box = serviceSecretBox(settings);
  const tokens = new AccessTokens({ db, settings, box, now: () => new Date(), onReauthorizationRequired: notifyReauthorizationRequired });
  let stored: Connection;
  try {
    stored = toConnection(row, box);
  } catch (error) {
    if (!(error instanceof CredentialsUnreadable)) throw error;
    // Sealed under another key: nothing can be asked; marked (with its notification) as a refused grant would be.
    const { reason: detail } = await tokens.requireReauthorizationForUnreadable(row, platform);
    return { destination: id, ok: false, message: `${detail.message} ${detail.hint}`, error: detail };
  }
  // A conversion action to validate against, when the caller names one (Google validates the whole request).
  const connection = conversionId ? { ...stored, settings: { ...stored.settings, test_conversion_action_id: conversionId } } : stored;
  const signal = AbortSignal.timeout(30_000);
  try {
    const result = await platform.testConnection(sendContextFor(platform, connection, { settings, tokens, signal, timeoutMs: 10_000, now: () => new Date() }));
    // A credential the test proved refused: every delivery would be refused the same way, so say so now (status,
    // notification), not at the next conversion.
    if (result.credentialRefused && result.error) await tokens.requireReauthorization(stored, result.error);
    const { credentialRefused: _refused, refusedFields: _fields, actionNames, ...answer } = result;
    const warning = answer.ok && actionNames ? await unmatchedActions(db, accountId, row.type, actionNames) : '';
    if (warning) answer.message += ` ${warning}`;
    // The stored credential works again: connected, and what a reconnect does (destination.recovered, the conversions
    // that waited sent now), unless a new handoff replaced the credential meanwhile (it did all that itself).
    if (answer.ok && row.status === 'reauthorization_required') {
      const recovered = await markRecovered(db, stored, async (tx) => {
        await enqueueDestinationNotification(tx, id, 'destination.recovered', `${platform.label} works again (a connection test passed); the conversions that waited are being sent.`);
        await resumeDeliveries(tx, accountId, row.type);
      });
      if (recovered) answer.message += ' The connection is marked connected again; the conversions that waited are being sent.';
    }
    return { destination: id, ...answer, ...(warning ? { warning } : {}) };
  } catch (error) {
    if (error instanceof OAuthClientRefused) {
      // The service's own client: the operator's settings, not this connection (which stays connected).
      return { destination: id, ...error.testResult() };
    }
    if (error instanceof ReauthorizationRequired || error instanceof TokenUnavailable) {
      const detail = error instanceof TokenUnavailable ? error.error : { code: 'reauthorization_required', message: error.message };
      return { destination: id, ok: false, message: detail.message, error: detail };
    }
    throw error;
  }
}
