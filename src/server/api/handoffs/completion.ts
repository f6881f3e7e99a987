/**
 * The hosted side of a handoff: what its page shows, and completing it (connect a destination, or connect the API
 * trigger source and reveal its webhook secret once). Exactly one completion wins; a completed handoff changes nothing.
 */
import type { Database, Queryable } from '../../db/db';
import type { Settings } from '../../settings';
import { claimPendingHandoff, findHandoffByToken, type HandoffRow } from './sql';
import { findSite, type SiteRow } from '../sites';
import { upsertDestination } from '../../destinations/sql';
import { connectTriggerSource } from '../../webhook';
import { triggerKeysOfSite } from '../flows';
import { WEBHOOK_PREFIX, saasSignupPath } from '../../../protocol/webhook';
import { destinationKind, type DestinationKind, type Problem } from '../../destinations/kinds';

/** Where a site's API trigger reports go. */
export interface WebhookTarget {
  /** The URL with `{trigger_key}` standing for the key the user picks in a flow. */
  urlTemplate: string;
  /** Concrete URLs for the keys the site's flows already use. */
  known: { key: string; url: string }[];
}

export type HostedHandoff =
  | { kind: 'destination'; handoff: HandoffRow; destination: DestinationKind }
  | { kind: 'trigger_source'; handoff: HandoffRow; site: SiteRow; webhook: WebhookTarget };

/** The webhook URL of a site's API trigger (template and the keys in use). */
export async function webhookTarget(db: Queryable, settings: Settings, site: SiteRow): Promise<WebhookTarget> {
  const keys = await triggerKeysOfSite(db, site.id);
  return {
    urlTemplate: `${settings.webhookBaseUrl}${WEBHOOK_PREFIX}/saas-signup/${encodeURIComponent(site.site_key)}/{trigger_key}`,
    known: keys.map((key) => ({ key, url: `${settings.webhookBaseUrl}${saasSignupPath(site.site_key, key)}` })),
  };
}

/** The handoff behind a hosted url token, with what its page needs; null for an unknown token. */
export async function openHostedHandoff(db: Queryable, settings: Settings, token: string): Promise<HostedHandoff | null> {
  // Tokens are base62; anything else cannot match, so skip the query.
  if (!/^[A-Za-z0-9]{16,64}$/.test(token)) return null;
  const handoff = await findHandoffByToken(db, token);
  if (!handoff) return null;
  if (handoff.purpose === 'connect_destination') {
    const destination = destinationKind(handoff.destination_type ?? '');
    return destination ? { kind: 'destination', handoff, destination } : null;
  }
  const site = handoff.site_id ? await findSite(db, handoff.account_id, handoff.site_id) : null;
  return site ? { kind: 'trigger_source', handoff, site, webhook: await webhookTarget(db, settings, site) } : null;
}

type DestinationHandoff = Extract<HostedHandoff, { kind: 'destination' }>;
type TriggerSourceHandoff = Extract<HostedHandoff, { kind: 'trigger_source' }>;

/** Connects the destination with the submitted consent form, or says what is wrong with the form. */
export async function completeDestinationHandoff(
  db: Database,
  hosted: DestinationHandoff,
  form: Record<string, string>,
): Promise<{ kind: 'invalid'; errors: Problem[] } | { kind: 'already_completed' } | { kind: 'connected'; summary: string }> {
  if (hosted.handoff.status === 'completed') return { kind: 'already_completed' };
  const parsed = hosted.destination.parseConnectForm(form);
  if (!parsed.ok) return { kind: 'invalid', errors: parsed.errors };
  return db.transaction(async (tx) => {
    const claimed = await claimPendingHandoff(tx, hosted.handoff.token, { destination_type: hosted.destination.type, summary: parsed.summary });
    if (!claimed) return { kind: 'already_completed' } as const;
    await upsertDestination(tx, claimed.account_id, hosted.destination.type, parsed.settings);
    return { kind: 'connected', summary: parsed.summary } as const;
  });
}

/**
 * Connects the site's API trigger source with a new webhook secret (rotating an existing one). The secret is returned
 * for the page alone: it is never logged and never stored anywhere an API reads.
 */
export async function completeTriggerSourceHandoff(
  db: Database,
  hosted: TriggerSourceHandoff,
): Promise<{ kind: 'already_completed' } | { kind: 'connected'; secret: string; rotated: boolean }> {
  if (hosted.handoff.status === 'completed') return { kind: 'already_completed' };
  return db.transaction(async (tx) => {
    const claimed = await claimPendingHandoff(tx, hosted.handoff.token, { trigger_source: 'api', site_id: hosted.site.id });
    if (!claimed) return { kind: 'already_completed' } as const;
    const { secret, created } = await connectTriggerSource(tx, claimed.account_id, hosted.site.id, 'api');
    return { kind: 'connected', secret, rotated: !created } as const;
  });
}
