/** Rows a delivery test needs (account, site, connected Google Ads destination, report, event) and a steppable clock. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Database, Queryable } from '../../../src/server/db/db';
import { openDatabase } from '../../../src/server/db/db';
import { migrate } from '../../../src/server/db/migrations';
import { insertAccount } from '../../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../../src/server/api/sites/sql';
import { insertEvent } from '../../../src/server/fanout/sql';
import { newId } from '../../../src/server/db/ids';
import { secretBox } from '../../../src/server/db/secret-box';
import { GRANTED_SCOPE_CREDENTIAL, OAUTH_CLIENT_CREDENTIAL, sealCredentials, upsertDestination } from '../../../src/server/destinations';
import type { FakeGoogle } from '../../../src/demo/fakes/google';
import { loadSettings, type Settings } from '../../../src/server/settings';
import type { DatabaseKind } from '../support/databases';
import type { DeliveryLogger } from '../../../src/server/delivery/worker';

export const CUSTOMER_ID = '1234567890';
export const DEVELOPER_TOKEN = 'test-developer-token';
/** The key that seals stored credentials in tests (32 bytes, hex). */
export const TEST_SECRET_KEY = '7'.repeat(64);

export interface DeliveryFixture {
  accountId: string;
  site: SiteRow;
}

/**
 * An account with a site in `timezone` and a connected google-ads destination (customer 123-456-7890), authorized by
 * `refreshToken` (issued by the fake Google). By default it sends through the legacy Google Ads API
 * (`api: google_ads_api`); `api: 'data_manager'` sends through the Data Manager API.
 */
export async function createDeliveryFixture(
  db: Database,
  options: {
    timezone?: string;
    refreshToken?: string;
    api?: 'google_ads_api' | 'data_manager';
    destinationSettings?: Record<string, unknown> | null;
    /** The scope the grant was given at its sign-in, stored with it as the hosted handoff does (none: a grant before that). */
    grantedScope?: string;
    /** The OAuth client the grant was issued to, stored with it as the hosted handoff does (none: a grant before that). */
    oauthClientId?: string;
  } = {},
): Promise<DeliveryFixture> {
  const account = await insertAccount(db, 'delivery test');
  const site = await insertSite(db, account.id, { timezone: options.timezone ?? 'America/New_York', domain: 'https://shop.example' });
  const api = options.api ?? 'google_ads_api';
  const settings =
    options.destinationSettings === undefined ? { customer_id: '1234567890', login_customer_id: null, api } : options.destinationSettings;
  if (settings !== null) {
    const box = secretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));
    const credentials = {
      refresh_token: options.refreshToken ?? 'no-refresh-token',
      ...(api === 'google_ads_api' ? { developer_token: DEVELOPER_TOKEN } : {}),
      ...(options.grantedScope ? { [GRANTED_SCOPE_CREDENTIAL]: options.grantedScope } : {}),
      ...(options.oauthClientId ? { [OAUTH_CLIENT_CREDENTIAL]: options.oauthClientId } : {}),
    };
    await upsertDestination(db, account.id, 'google-ads', settings, sealCredentials(box, credentials));
  }
  return { accountId: account.id, site };
}

export interface ReportedEventOptions {
  customerEventId?: string;
  identity?: Record<string, string>;
  clickIds?: Record<string, string> | null;
  /** A report with a token whose snapshot has not arrived: the event waits for pairing. */
  pendingToken?: string;
  occurredAt?: Date;
  /** Actions of the flow; one google-ads action with conversion 987654321 by default. */
  actions?: Array<{ destination: string; conversionId: string | null }>;
}

/** Inserts a webhook report and its event (as the webhook bridge would), queued for delivery. */
export async function insertReportedEvent(
  db: Database,
  fx: DeliveryFixture,
  options: ReportedEventOptions = {},
): Promise<{ eventId: string; actionIds: string[]; reportId: string; customerEventId: string }> {
  const customerEventId = options.customerEventId ?? `signup-${randomBytes(4).toString('hex')}`;
  const reportId = newId('rpt');
  const identity = options.identity ?? { email: 'Jane.Doe@Gmail.com' };
  return db.transaction(async (tx) => {
    await tx.query(
      `insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity, allow_uncorrelated)
       values ($1, $2, $3, 'signup', $4, $5, $6)`,
      [reportId, fx.site.id, customerEventId, options.pendingToken ?? null, JSON.stringify(identity), !options.pendingToken],
    );
    const pending = options.pendingToken !== undefined;
    const clickIds = options.clickIds === undefined ? { gclid: 'Cj0KCQtestGCLID' } : options.clickIds;
    const { id, actionIds } = await insertEvent(tx, {
      accountId: fx.accountId,
      siteId: fx.site.id,
      siteKey: fx.site.site_key,
      flowId: null,
      flowName: 'Signups',
      reportId,
      trigger: 'api',
      occurredAt: options.occurredAt ?? new Date(),
      matchQuality: pending ? null : clickIds ? 'high' : 'low',
      email: identity.email ?? null,
      clickIds: pending ? null : clickIds,
      data: pending
        ? { customer_event_id: customerEventId, match_reason: 'snapshot_pending', correlation_token: options.pendingToken }
        : { customer_event_id: customerEventId, match_reason: clickIds ? 'paired' : 'no_correlation_token' },
      actions: options.actions ?? [{ destination: 'google-ads', conversionId: '987654321' }],
    });
    return { eventId: id, actionIds, reportId, customerEventId };
  });
}

/** Service settings pointing Google at fakes: the legacy Google Ads API, and Google's OAuth and Data Manager API. */
export function settingsFor(apiBase: string, env: Record<string, string> = {}, google?: FakeGoogle): Settings {
  return loadSettings({
    CNV_DEMO_PORT: 'off',
    CNV_SECRET_KEY: TEST_SECRET_KEY,
    CNV_GOOGLE_ADS_API_BASE: apiBase,
    CNV_GOOGLE_ADS_DEVELOPER_TOKEN: DEVELOPER_TOKEN,
    ...(google
      ? {
          CNV_GOOGLE_DATA_MANAGER_API_BASE: google.urls.apiBase,
          CNV_GOOGLE_OAUTH_AUTHORIZE_URL: google.urls.authorize,
          CNV_GOOGLE_OAUTH_TOKEN_URL: google.urls.token,
          CNV_GOOGLE_OAUTH_CLIENT_ID: google.client.id,
          CNV_GOOGLE_OAUTH_CLIENT_SECRET: google.client.secret,
        }
      : {}),
    ...env,
  });
}

/** A clock that starts at the real time and moves only when told. */
export function steppableClock(start: Date = new Date()): { now: () => Date; advance(ms: number): void } {
  let at = start.getTime();
  return {
    now: () => new Date(at),
    advance(ms: number) {
      at += ms;
    },
  };
}

/** A logger that keeps what it was told, for assertions and quiet test output. */
export function memoryLog(): DeliveryLogger & { lines: Array<{ level: string; msg: string | undefined; obj: object }> } {
  const lines: Array<{ level: string; msg: string | undefined; obj: object }> = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, msg, obj });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** The action and event rows as a reader of GET /v1/events would see them. */
export async function readOutcome(db: Database, eventId: string) {
  const [event] = await db.query<{ status: string; match_quality: string | null; click_ids: Record<string, string> | null }>(
    'select status, match_quality, click_ids from events where id = $1',
    [eventId],
  );
  const actions = await db.query<{
    id: string; destination: string; status: string; attempts: number;
    error: { code: string; message: string; retrying?: boolean } | null; request: Record<string, unknown> | null; delivered_at: Date | null;
  }>('select id, destination, status, attempts, error, request, delivered_at from event_actions where event_id = $1 order by position', [eventId]);
  const outbox = await db.query<{ attempts: number; due_at: Date; locked_until: Date | null }>(
    'select o.attempts, o.due_at, o.locked_until from outbox o join event_actions a on a.id = o.event_action_id where a.event_id = $1',
    [eventId],
  );
  return { event: event!, actions, outbox };
}

/**
 * Two handles on one fresh database: for PostgreSQL two separate connection pools (as two service processes would
 * have); for PGlite, which is in-process, the same handle twice.
 */
export async function openTwoHandles(kind: DatabaseKind): Promise<{ first: Database; second: Database; close(): Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (kind.name === 'pglite' || !url) {
    const db = await kind.open();
    return { first: db, second: db, close: () => db.close() };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const separator = url.includes('?') ? '&' : '?';
  const schemaUrl = `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const first = await openDatabase({ databaseUrl: schemaUrl });
  await migrate(first);
  const second = await openDatabase({ databaseUrl: schemaUrl });
  return {
    first,
    second,
    async close() {
      await first.close();
      await second.close();
    },
  };
}

/**
 * The database seen through a hook: `after` runs once, right after the first transaction that ran a statement
 * containing `match` has committed (e.g. a reconnect landing after a worker marked a connection and before it writes
 * its rows' outcomes, in their own transaction).
 */
export function afterTransactionRunning(db: Database, match: string, after: () => Promise<void>): Database {
  let fired = false;
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
        let matched = false;
        const result = await target.transaction((tx) =>
          fn({ query: (sql, params) => ((matched ||= sql.includes(match)), tx.query(sql, params)) }),
        );
        if (matched && !fired) {
          fired = true;
          await after();
        }
        return result;
      };
    },
  });
}

/** The database seen through a hook: `before` runs once, inside the transaction, before the first statement containing `match`. */
export function beforeStatement(db: Database, match: string, before: () => Promise<void>): Database {
  let fired = false;
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> =>
        target.transaction((tx) =>
          fn({
            async query(sql, params) {
              if (!fired && sql.includes(match)) {
                fired = true;
                await before();
              }
              return tx.query(sql, params);
            },
          }),
        );
    },
  });
}
