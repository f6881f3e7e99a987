/** Handoffs through the API: create one (its hosted url is where the user authorizes) and poll it. */
import type { Queryable } from '../../db/db';
import type { Settings } from '../../settings';
import { serviceSecretBox } from '../../db/secret-box';
import { findHandoff, handoffExpired, insertHandoff, type HandoffPurpose, type HandoffRow } from './sql';
import { firstSites } from '../sites';
import { ApiError, invalidParam, notFound, printable } from '../../http/errors';
import { requireSite } from '../sites';
import { platformFor, supportedDestinationTypes } from '../../destinations';
import type { CreateHandoffBody } from './schemas';

export { TRIGGER_SOURCES } from './schemas';

/** The Handoff record: the spec's id, url, status, and what it connects. */
export interface HandoffRecord {
  id: string;
  /** Null when its token was sealed under another CNV_SECRET_KEY (the link itself still works). */
  url: string | null;
  status: 'pending' | 'completed' | 'expired';
  purpose: HandoffPurpose;
  destination_type: string | null;
  trigger_source: string | null;
  site_id: string | null;
  created_at: string;
  completed_at: string | null;
}

/** Where the user goes to authorize: the hosted page, addressed by the unguessable token (never by the id). */
export function handoffUrl(settings: Settings, token: string): string {
  return `${settings.publicUrl}/handoffs/${token}`;
}

/** The API view of a stored handoff. */
export function toHandoffRecord(settings: Settings, row: HandoffRow): HandoffRecord {
  return {
    id: row.id,
    url: row.token === null ? null : handoffUrl(settings, row.token),
    status: handoffExpired(row) ? 'expired' : row.status,
    purpose: row.purpose,
    destination_type: row.destination_type,
    trigger_source: row.trigger_source,
    site_id: row.site_id,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

/** The site a trigger source handoff is for: the one named, or the account's only site. */
async function siteForTriggerSource(db: Queryable, accountId: string, siteId: string | undefined): Promise<string> {
  if (siteId !== undefined) {
    return (await requireSite(db, accountId, siteId, 'site_id')).id;
  }
  const sites = await firstSites(db, accountId, 2);
  if (sites.length === 1) return sites[0]!.id;
  if (sites.length === 0) {
    throw new ApiError(400, 'invalid_request_error', 'no_site', 'The account has no site yet: create one with POST /v1/sites first.', 'site_id');
  }
  throw invalidParam(
    'site_id',
    'The account has more than one site: pass site_id to say which site the trigger source is for.',
    'parameter_missing',
  );
}

/** POST /v1/handoffs: a pending handoff and its hosted url. */
export async function createHandoff(db: Queryable, settings: Settings, accountId: string, body: CreateHandoffBody): Promise<HandoffRecord & { url: string }> {
  if (body.purpose === 'connect_destination') {
    const type = body.destination_type;
    if (!platformFor(type)) {
      throw invalidParam(
        'destination_type',
        `destination_type '${printable(type)}' is not supported; supported: ${supportedDestinationTypes().join(', ')}.`,
      );
    }
    const row = await insertHandoff(db, serviceSecretBox(settings), { accountId, purpose: body.purpose, destinationType: type, triggerSource: null, siteId: null });
    return { ...toHandoffRecord(settings, row), url: handoffUrl(settings, row.token) };
  }
  const siteId = await siteForTriggerSource(db, accountId, body.site_id);
  const row = await insertHandoff(db, serviceSecretBox(settings), { accountId, purpose: body.purpose, destinationType: null, triggerSource: body.trigger_source ?? 'api', siteId });
  return { ...toHandoffRecord(settings, row), url: handoffUrl(settings, row.token) };
}

/** GET /v1/handoffs/{id}: the handoff, for polling until status is completed. */
export async function getHandoff(db: Queryable, settings: Settings, accountId: string, id: string): Promise<HandoffRecord> {
  const row = await findHandoff(db, serviceSecretBox(settings), accountId, id);
  if (!row) throw notFound('handoff', id);
  return toHandoffRecord(settings, row);
}
