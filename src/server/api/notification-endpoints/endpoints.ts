/** Notification endpoints of an account: create (the signing secret shown once), list, read, delete. */
import type { Database } from '../../db/db';
import type { Settings } from '../../settings';
import { serviceSecretBox } from '../../db/secret-box';
import { invalidParam, notFound } from '../../http/errors';
import { paginate, pageRequestOf, type ListEnvelope } from '../../http/pagination';
import {
  deleteEndpoint,
  newEndpointUrlProblem,
  findEndpoint,
  insertEndpoint,
  listEndpointsPage,
  newEndpointSecret,
  type EndpointRow,
} from '../../notifications';
import type { CreateEndpointBody, ListEndpointsQuery } from './schemas';

export interface EndpointRecord {
  id: string;
  url: string;
  kinds: string[];
  created_at: string;
}

function toRecord(row: EndpointRow): EndpointRecord {
  return { id: row.id, url: row.url, kinds: row.kinds, created_at: row.created_at.toISOString() };
}

/** POST: the endpoint and its `secret` (`whsec_…`), returned this once and never again. */
export async function createEndpoint(db: Database, settings: Settings, accountId: string, body: CreateEndpointBody): Promise<EndpointRecord & { secret: string }> {
  const problem = body.url.length > 2000 ? 'url must be at most 2,000 characters.' : newEndpointUrlProblem(body.url, { privateAddresses: settings.notificationPrivateAddresses });
  if (problem) throw invalidParam('url', problem, 'url_invalid');
  if (body.kinds.length === 0) throw invalidParam('kinds', 'Choose at least one kind of notification.', 'parameter_invalid');
  const secret = newEndpointSecret();
  const row = await insertEndpoint(db, accountId, body.url, body.kinds, serviceSecretBox(settings).seal(secret));
  return { ...toRecord(row), secret };
}

export async function listEndpoints(db: Database, accountId: string, query: ListEndpointsQuery): Promise<ListEnvelope<EndpointRecord>> {
  return paginate(pageRequestOf(query), (r) => listEndpointsPage(db, accountId, r), toRecord);
}

export async function getEndpoint(db: Database, accountId: string, id: string): Promise<EndpointRecord> {
  const row = await findEndpoint(db, accountId, id);
  if (!row) throw notFound('notification endpoint', id);
  return toRecord(row);
}

/** DELETE: the endpoint goes, with its pending notifications. */
export async function removeEndpoint(db: Database, accountId: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!(await deleteEndpoint(db, accountId, id))) throw notFound('notification endpoint', id);
  return { id, deleted: true };
}
