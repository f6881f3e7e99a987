/** REST test helpers: an in-process service on a database of a given kind, extra accounts, and request shortcuts. */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../../src/server/app';
import { createRateLimits } from '../../../src/server/rate-limits';
import type { Database } from '../../../src/server/db/db';
import { insertAccount, issueApiKey } from '../../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../../src/server/api/sites/sql';
import { loadSettings, type Settings } from '../../../src/server/settings';
import type { DatabaseKind } from './databases';

export interface Tenant {
  accountId: string;
  apiKey: string;
  site: SiteRow;
  auth: { authorization: string };
}

export interface RestService extends Tenant {
  app: FastifyInstance;
  db: Database;
  settings: Settings;
  /** Another account with its own key and site. */
  addTenant(name?: string): Promise<Tenant>;
  close(): Promise<void>;
}

/** Creates an account with a key and a site. */
export async function createTenant(db: Database, name = 'Tenant'): Promise<Tenant> {
  const account = await insertAccount(db, name);
  const { key } = await issueApiKey(db, account.id, 'test');
  const site = await insertSite(db, account.id);
  return { accountId: account.id, apiKey: key, site, auth: { authorization: `Bearer ${key}` } };
}

/** Starts the app in process on a fresh database of `kind`, with one tenant; `adjust` changes the settings read from `env`. */
/** What a test may set of the service besides its settings. */
export interface RestServiceOptions {
  /**
   * The clock (ms) of the rate limits' windows: a test that counts requests up to a limit sets one that stands still, so
   * its count never crosses the edge of a window (they start at every whole minute of the clock).
   */
  rateLimitNow?: () => number;
}

export async function createRestService(
  kind: DatabaseKind,
  env: Record<string, string> = {},
  logger?: unknown,
  adjust: (settings: Settings) => Settings = (settings) => settings,
  options: RestServiceOptions = {},
): Promise<RestService> {
  const settings = adjust(loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: '5'.repeat(64), CNV_PUBLIC_URL: 'https://api.cnv.test', CNV_WEBHOOK_BASE_URL: 'https://hooks.cnv.test', ...env }));
  const db = await kind.open();
  const tenant = await createTenant(db, 'Test account');
  const rateLimits = options.rateLimitNow ? createRateLimits({ settings, db, now: options.rateLimitNow }) : undefined;
  const app = await buildApp({ db, settings, logger: (logger ?? false) as boolean, ...(rateLimits ? { rateLimits } : {}) });
  await app.ready();
  return {
    ...tenant,
    app,
    db,
    settings,
    addTenant: (name) => createTenant(db, name),
    async close() {
      await app.close();
      await rateLimits?.stop();
      await db.close();
    },
  };
}

/** The parsed JSON of a response. */
export function json<T = any>(response: LightMyRequestResponse): T {
  return response.json() as T;
}

/** The error envelope's error of a response. */
export function errorOf(response: LightMyRequestResponse): { type: string; code: string; message: string; param?: string } {
  return (response.json() as { error: { type: string; code: string; message: string; param?: string } }).error;
}
