/**
 * The four ad platforms as delivery tests meet them: each one's strict fake started, a connection to it stored as a
 * finished handoff stores it, a flow action for it, and the levers a test pulls (revoke the access tokens, refuse the
 * refresh token, hand over a new grant).
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '../../../src/server/db/db';
import { insertAccount } from '../../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../../src/server/api/sites/sql';
import { insertFlow } from '../../../src/server/api/flows/sql';
import { insertEvent } from '../../../src/server/fanout/sql';
import { newId } from '../../../src/server/db/ids';
import { secretBox } from '../../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../../src/server/destinations';
import { resumeDeliveries } from '../../../src/server/delivery/outbox-sql';
import { startFakeGoogle } from '../../../src/demo/fakes/google';
import { startFakeMicrosoftAds } from '../../../src/demo/fakes/microsoft-ads';
import { startLinkedInFake } from '../../../src/demo/fakes/linkedin';
import { startFakeMeta, FAKE_META_TOKEN } from '../../../src/demo/fakes/meta';
import type { FakeRequest } from '../../../src/demo/fakes/fake-server';
import { TEST_SECRET_KEY } from './fixtures';

/** A platform's fake, as a test drives it. */
export interface PlatformFake {
  type: 'google-ads' | 'meta' | 'microsoft-ads' | 'linkedin';
  label: string;
  /** Settings that point the service at the fake. */
  env: Record<string, string>;
  /** Whether the platform refreshes access tokens with a refresh token (Meta's system-user token has none). */
  oauth: boolean;
  /** Requests that carried conversions to the platform, oldest first. */
  sends(): FakeRequest[];
  /** Requests of the platform's own adjustment operation (Microsoft's ApplyOfflineConversionAdjustments), oldest first. */
  adjustmentSends(): FakeRequest[];
  /** Refresh-token grants the platform's token endpoint received. */
  refreshes(): FakeRequest[];
  /** The platform's next answer to a send is a 5xx (delivery retries with the same dedup id). */
  failNextSend(): void;
  /** The platform refuses every access token issued so far (a revoked grant, a password change). */
  revokeAccessTokens(): void;
  /** The platform refuses the stored refresh token (or, for Meta, the stored token) from now on. */
  revokeGrant(): void;
  /** Credentials a new handoff stores (a new refresh token, or a new Meta token). */
  newCredentials(): Record<string, string>;
  /** The platform accepts the stored credentials again after `revokeGrant` (Meta: the system user's access restored), where it can. */
  acceptStoredCredentials?(): void;
  /** The connection's non-secret settings, as the connect form stores them. */
  settings: Record<string, unknown>;
  /** The flow action's config. */
  actionConfig: Record<string, unknown>;
  /** The click of an ad of this platform, as the loader stores it, and its cookies. */
  clickIds: Record<string, string>;
  cookies: Record<string, string>;
  /** The event ids (dedup ids) the fake received, in order. */
  sentEventIds(): string[];
  /** Every user identifier the fake received (hashed or not), flattened to strings. */
  sentUserIdentifiers(): string[];
  close(): Promise<void>;
}

const MS_CLICK = '2f1a6b1c9e3d4c5ba0f1e2d3c4b5a697';

/** Starts the fake of a platform. */
export async function startPlatform(type: PlatformFake['type']): Promise<PlatformFake> {
  switch (type) {
    case 'google-ads': {
      const google = await startFakeGoogle();
      const ingests = () => google.server.requests.filter((r) => r.path === '/v1/events:ingest');
      return {
        type, label: 'Google Ads', oauth: true,
        env: {
          CNV_GOOGLE_DATA_MANAGER_API_BASE: google.urls.apiBase,
          CNV_GOOGLE_OAUTH_AUTHORIZE_URL: google.urls.authorize,
          CNV_GOOGLE_OAUTH_TOKEN_URL: google.urls.token,
          CNV_GOOGLE_OAUTH_CLIENT_ID: google.client.id,
          CNV_GOOGLE_OAUTH_CLIENT_SECRET: google.client.secret,
        },
        sends: ingests,
        // A Data Manager restatement is an events:ingest of the same event: it is among sends().
        adjustmentSends: () => [],
        failNextSend: () => google.server.respondWith({ kind: 'serverError', status: 503 }),
        refreshes: () => google.server.requests.filter((r) => r.path === '/token' && r.body.grant_type === 'refresh_token'),
        revokeAccessTokens: () => google.revokeAccessTokens(),
        revokeGrant: () => google.revokeRefreshTokens(),
        newCredentials: () => ({ refresh_token: google.issueRefreshToken() }),
        settings: { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
        actionConfig: { conversion: { id: '987654321' } },
        clickIds: { gclid: 'Cj0KCQtestGCLID' },
        cookies: {},
        sentEventIds: () => ingests().flatMap((r) => (r.body.events as { transactionId: string }[]).map((e) => e.transactionId)),
        sentUserIdentifiers: () =>
          ingests().flatMap((r) => (r.body.events as { userData?: { userIdentifiers: Record<string, string>[] } }[]).flatMap((e) => (e.userData?.userIdentifiers ?? []).flatMap((u) => Object.values(u)))),
        close: () => google.close(),
      };
    }
    case 'meta': {
      let token = FAKE_META_TOKEN;
      const meta = await startFakeMeta({ accessToken: token });
      const sends = () => meta.requests.filter((r) => r.path.endsWith('/events'));
      return {
        type, label: 'Meta', oauth: false,
        env: { CNV_META_GRAPH_API_BASE: meta.url },
        sends,
        adjustmentSends: () => [],
        failNextSend: () => meta.respondWith('server_error'),
        refreshes: () => [],
        revokeAccessTokens: () => meta.setAccessToken(`EAArevoked${randomBytes(8).toString('hex')}`),
        revokeGrant: () => meta.setAccessToken(`EAArevoked${randomBytes(8).toString('hex')}`),
        newCredentials: () => {
          token = `EAAnew${randomBytes(12).toString('hex')}`;
          meta.setAccessToken(token);
          return { access_token: token };
        },
        acceptStoredCredentials: () => meta.setAccessToken(token),
        settings: { pixel_id: '1234567890123456' },
        actionConfig: {},
        clickIds: { fbclid: 'IwAR2F4-dbP0l7Mn' },
        cookies: { _fbp: 'fb.1.1596403881668.1116446470' },
        sentEventIds: () => sends().flatMap((r) => (r.body.data as { event_id: string }[]).map((e) => e.event_id)),
        sentUserIdentifiers: () => sends().flatMap((r) => (r.body.data as { user_data: Record<string, unknown> }[]).flatMap((e) => Object.values(e.user_data).flat().map(String))),
        close: () => meta.close(),
      };
    }
    case 'microsoft-ads': {
      const microsoft = await startFakeMicrosoftAds({ goals: [{ name: 'Signup', createdAt: new Date(Date.now() - 3 * 86_400_000) }] });
      const applies = () => microsoft.requests.filter((r) => r.path.endsWith('/OfflineConversions/Apply'));
      return {
        type, label: 'Microsoft Advertising', oauth: true,
        env: microsoft.env,
        sends: applies,
        adjustmentSends: () => microsoft.requests.filter((r) => r.path.endsWith('/OfflineConversionAdjustments/Apply')),
        failNextSend: () => microsoft.respondWith({ kind: 'status', status: 503 }),
        refreshes: () => microsoft.requests.filter((r) => r.path.endsWith('/token') && r.body.grant_type === 'refresh_token'),
        revokeAccessTokens: () => microsoft.revokeAccessTokens(),
        revokeGrant: () => microsoft.revokeRefreshTokens(),
        newCredentials: () => ({ refresh_token: microsoft.issueRefreshToken() }),
        settings: { customer_id: microsoft.customerId, account_id: microsoft.accountId },
        actionConfig: { conversion_name: 'Signup' },
        clickIds: { msclkid: MS_CLICK },
        cookies: {},
        // Microsoft has no event id: it ignores a repeat of the same click id, time and goal.
        sentEventIds: () => applies().flatMap((r) => (r.body.OfflineConversions as { MicrosoftClickId?: string; ConversionTime: string }[]).map((c) => `${c.MicrosoftClickId} ${c.ConversionTime}`)),
        sentUserIdentifiers: () =>
          applies().flatMap((r) => (r.body.OfflineConversions as Record<string, string>[]).flatMap((c) => [c.MicrosoftClickId, c.HashedEmailAddress, c.HashedPhoneNumber].filter((v): v is string => !!v))),
        close: () => microsoft.close(),
      };
    }
    case 'linkedin': {
      const linkedin = await startLinkedInFake();
      const sends = () => linkedin.requests.filter((r) => r.path === '/rest/conversionEvents');
      return {
        type, label: 'LinkedIn', oauth: true,
        env: {
          CNV_LINKEDIN_API_BASE: linkedin.url,
          CNV_LINKEDIN_OAUTH_AUTHORIZE_URL: linkedin.authorizeUrl,
          CNV_LINKEDIN_OAUTH_TOKEN_URL: linkedin.tokenUrl,
          CNV_LINKEDIN_OAUTH_CLIENT_ID: linkedin.clientId,
          CNV_LINKEDIN_OAUTH_CLIENT_SECRET: linkedin.clientSecret,
        },
        sends,
        adjustmentSends: () => [],
        failNextSend: () => linkedin.respondWith({ kind: 'http', status: 500, message: 'Internal error' }),
        refreshes: () => linkedin.requests.filter((r) => r.path === '/oauth/v2/accessToken' && r.body.grant_type === 'refresh_token'),
        revokeAccessTokens: () => linkedin.revokeAccessTokens(),
        revokeGrant: () => linkedin.revokeRefreshTokens(),
        newCredentials: () => ({ refresh_token: linkedin.issueRefreshToken() }),
        settings: { ad_account_id: '507404993', ad_account_urn: 'urn:li:sponsoredAccount:507404993' },
        actionConfig: { conversion_rule: '104012' },
        clickIds: { li_fat_id: 'df5gf5-gh6t7-ph4j7h-fgf6n1' },
        cookies: {},
        sentEventIds: () => sends().flatMap((r) => (r.body.elements as { eventId: string }[]).map((e) => e.eventId)),
        sentUserIdentifiers: () =>
          sends().flatMap((r) =>
            (r.body.elements as { user: { userIds: { idValue: string }[]; userInfo?: Record<string, string> } }[]).flatMap((e) => [
              ...e.user.userIds.map((u) => u.idValue),
              ...Object.values(e.user.userInfo ?? {}),
            ]),
          ),
        close: () => linkedin.close(),
      };
    }
  }
}

/** What connecting a platform and reporting a conversion for it need (any platform cnv delivers to, fake or not). */
export type PlatformSetup = Pick<PlatformFake, 'settings' | 'actionConfig' | 'clickIds' | 'cookies' | 'newCredentials'> & { type: string };

/** An account with a site, a live flow with one action for the platform, and the platform connected. */
export interface PlatformAccount {
  accountId: string;
  site: SiteRow;
  flowId: string;
}

const box = () => secretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));

/** Stores the connection as a completed handoff does (settings, sealed credentials, status connected). */
export async function connect(db: Database, accountId: string, platform: PlatformSetup): Promise<string> {
  const row = await upsertDestination(db, accountId, platform.type, platform.settings, sealCredentials(box(), platform.newCredentials()));
  return row.id;
}

/** What a completed new handoff does: new credentials, connected again, and the waiting conversions made due. */
export async function reconnect(db: Database, accountId: string, platform: PlatformFake): Promise<number> {
  await connect(db, accountId, platform);
  return resumeDeliveries(db, accountId, platform.type);
}

export async function createPlatformAccount(db: Database, platform: PlatformSetup): Promise<PlatformAccount> {
  const account = await insertAccount(db, `${platform.type} account`);
  const site = await insertSite(db, account.id, { timezone: 'Europe/Berlin', domain: 'https://shop.example' });
  const flow = await insertFlow(db, account.id, site.id, {
    name: 'Signups',
    triggerConfig: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
    actionsConfig: [{ integrationId: platform.type, config: platform.actionConfig }],
    triggerKey: 'signup',
  });
  await db.query(`update flows set status = 'live', published_at = now() where id = $1`, [flow.id]);
  await connect(db, account.id, platform);
  return { accountId: account.id, site, flowId: flow.id };
}

/**
 * A signup report paired with its browser snapshot (the platform's click, cookies, the page's consent), and the
 * event the webhook would have made of it, queued for delivery.
 */
export async function reportSignup(
  db: Database,
  acct: PlatformAccount,
  platform: PlatformSetup,
  options: { customerEventId?: string; adUserData?: 'granted' | 'denied' | null } = {},
): Promise<{ eventId: string; actionId: string; customerEventId: string }> {
  const customerEventId = options.customerEventId ?? `signup-${randomBytes(4).toString('hex')}`;
  const token = randomBytes(16).toString('base64url');
  const identity = { email: 'Jane.Doe@Example.com', phone: '+1 800 555 0102', first_name: 'Jane', last_name: 'Doe' };
  const occurredAt = new Date(Date.now() - 60_000);
  return db.transaction(async (tx) => {
    await tx.query(
      `insert into snapshots (site_id, correlation_token, occurred_at, trigger, page_url, touch, cookies, user_agent, ip_address, consent)
       values ($1, $2, $3, 'form_submit', 'https://shop.example/signup', $4, $5, 'Mozilla/5.0 (X11; Linux x86_64)', '203.0.113.7', $6)`,
      [
        acct.site.id, token, occurredAt,
        JSON.stringify({ click_ids: platform.clickIds, utm: {}, landing_page_url: 'https://shop.example/', referrer: null, captured_at: new Date(Date.now() - 3_600_000).toISOString() }),
        JSON.stringify(platform.cookies),
        JSON.stringify({ ad_user_data: options.adUserData ?? null, ad_personalization: null }),
      ],
    );
    const reportId = newId('rpt');
    await tx.query(
      `insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity, allow_uncorrelated)
       values ($1, $2, $3, 'signup', $4, $5, false)`,
      [reportId, acct.site.id, customerEventId, token, JSON.stringify(identity)],
    );
    const { id, actionIds } = await insertEvent(tx, {
      accountId: acct.accountId,
      siteId: acct.site.id,
      siteKey: acct.site.site_key,
      flowId: acct.flowId,
      flowName: 'Signups',
      reportId,
      trigger: 'api',
      occurredAt,
      matchQuality: 'high',
      email: identity.email.toLowerCase(),
      clickIds: platform.clickIds,
      data: { customer_event_id: customerEventId, match_reason: 'paired', correlation_token: token },
      actions: [{ destination: platform.type, conversionId: null }],
    });
    return { eventId: id, actionId: actionIds[0]!, customerEventId };
  });
}
