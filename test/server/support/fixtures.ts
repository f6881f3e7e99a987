/** Test fixtures for the collector and the webhook: rows inserted directly (flows, trigger sources), signed requests. */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../../src/server/db/db';
import { newId } from '../../../src/server/db/ids';
import { updateSite } from '../../../src/server/api/sites/sql';
import { insertFlow, transitionFlow } from '../../../src/server/api/flows/sql';
import { generateTestSignatureHeader } from '../../../src/protocol/hmac-node';
import { saasSignupPath, SIGNATURE_HEADER } from '../../../src/protocol/webhook';
import type { Snapshot } from '../../../src/protocol/collector';
import { parseSecretKey, secretBox, type SecretBox } from '../../../src/server/db/secret-box';

/** The CNV_SECRET_KEY of the test services (support/harness.ts, rest-harness.ts). */
export const TEST_SECRET_KEY = '5'.repeat(64);
/** The secret box of the test services: webhook secrets are stored sealed with it. */
export const TEST_SECRET_BOX: SecretBox = secretBox(parseSecretKey(TEST_SECRET_KEY));

/** A fresh correlation token (16 random bytes, base64url), as the loader makes them. */
export function newToken(): string {
  return randomBytes(16).toString('base64url');
}

/** Sets a site's domain through the sites SQL, as the API and the dashboard do (so the loader's config cache sees it). */
export async function setSiteDomain(db: Queryable, siteId: string, domain: string | null): Promise<void> {
  const [site] = await db.query<{ account_id: string }>('select account_id from sites where id = $1', [siteId]);
  await updateSite(db, site!.account_id, siteId, { domain });
}

/**
 * Connects the site's API trigger source with a given secret (and optionally a previous one still valid until), sealed
 * with `box` (the test services' by default) as the service stores them.
 */
export async function connectApiTrigger(
  db: Queryable,
  site: { id: string; account_id: string },
  secret: string,
  previous?: { secret: string; expiresAt: Date },
  box: SecretBox = TEST_SECRET_BOX,
): Promise<void> {
  await db.query(
    `insert into trigger_sources (id, account_id, site_id, type, secret, previous_secret, previous_secret_expires_at)
     values ($1, $2, $3, 'api', $4, $5, $6)
     on conflict (site_id, type) do update set secret = excluded.secret, previous_secret = excluded.previous_secret,
       previous_secret_expires_at = excluded.previous_secret_expires_at`,
    [newId('trs'), site.account_id, site.id, box.seal(secret), previous ? box.seal(previous.secret) : null, previous?.expiresAt ?? null],
  );
}

export interface FlowFixture {
  name?: string;
  triggerKey: string;
  status?: 'draft' | 'live';
  /** The API trigger's type: a signup (default) or a later stage (`conversion`). */
  triggerType?: 'saas_signup' | 'conversion';
  actions?: Array<{ integrationId: string; config: { conversion: { id: string } } }>;
}

/** Inserts a flow with an API trigger (live unless told otherwise); returns its id. */
export async function insertApiFlow(db: Queryable, site: { id: string; account_id: string }, flow: FlowFixture): Promise<string> {
  const id = newId('flow');
  const actions = flow.actions ?? [{ integrationId: 'google-ads', config: { conversion: { id: '123456789' } } }];
  await db.query(
    `insert into flows (id, account_id, site_id, name, trigger_config, actions_config, status, trigger_key, published_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, case when $7 = 'live' then now() end)`,
    [
      id, site.account_id, site.id, flow.name ?? `Flow ${flow.triggerKey}`,
      JSON.stringify({ type: flow.triggerType ?? 'saas_signup', integrationId: 'api', key: flow.triggerKey }),
      JSON.stringify(actions), flow.status ?? 'live', flow.triggerKey,
    ],
  );
  return id;
}

/** Inserts a live flow with a form trigger for `integrationId` on every page; returns its id. */
export async function insertFormFlow(db: Queryable, site: { id: string; account_id: string }, integrationId: string): Promise<string> {
  // Through the flows SQL, which notes the write (the loader's config cache and the webhook's live flows see it at once).
  const flow = await insertFlow(db, site.account_id, site.id, {
    name: `Leads ${integrationId}`,
    triggerConfig: { type: 'form_submission', integrationId, pageFilter: 'all' },
    actionsConfig: [{ integrationId: 'google-ads', config: { conversion: { id: '123456789' } } }],
    triggerKey: null,
  });
  await transitionFlow(db, site.account_id, flow.id, 'draft', 'live');
  return flow.id;
}

/** A signed webhook request for `app.inject`: exact body bytes and a header signed over them. */
export function signedReport(
  siteKey: string,
  triggerKey: string,
  body: unknown,
  secret: string,
  options: { timestamp?: number; rawBody?: string } = {},
): { method: 'POST'; url: string; headers: Record<string, string>; payload: string } {
  const url = saasSignupPath(siteKey, triggerKey);
  const payload = options.rawBody ?? JSON.stringify(body);
  const signature = generateTestSignatureHeader({ secret, path: url, body: payload, ...(options.timestamp ? { timestamp: options.timestamp } : {}) });
  return { method: 'POST', url, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature }, payload };
}

/** A valid snapshot body, with overrides. */
export function snapshotBody(overrides: Partial<Snapshot> = {}): Snapshot {
  return {
    correlation_token: newToken(),
    occurred_at: '2026-11-21T09:30:00.000Z',
    trigger: 'form_submit',
    page_url: 'https://www.example.com/signup',
    referrer: null,
    touch: {
      click_ids: { gclid: 'Cj0KCQ-gclid-1' },
      utm: { utm_source: 'google', utm_campaign: 'launch' },
      landing_page_url: 'https://www.example.com/?gclid=Cj0KCQ-gclid-1&utm_source=google&utm_campaign=launch',
      referrer: 'https://www.google.com/',
      captured_at: '2026-11-21T09:00:00.000Z',
    },
    cookies: { _fbp: 'fb.1.1700000000000.123' },
    ...overrides,
  };
}
