/** An in-process service for tests: a fresh in-memory PGlite (a clone of the migrated image), one account, key and site. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/server/app';
import type { Database } from '../../../src/server/db/db';
import { openMigratedPglite } from '../../support/pglite';
import { insertAccount, issueApiKey } from '../../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../../src/server/api/sites/sql';
import { loadSettings, type Settings } from '../../../src/server/settings';

export interface TestService {
  app: FastifyInstance;
  db: Database;
  settings: Settings;
  accountId: string;
  apiKey: string;
  site: SiteRow;
  /** Headers with the account's Bearer key. */
  auth: { authorization: string };
  close(): Promise<void>;
}

/** Starts an in-process service on a fresh in-memory database. Pass settings overrides as environment variables. */
export async function createTestService(env: Record<string, string> = {}, options: { now?: () => Date } = {}): Promise<TestService> {
  const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: '5'.repeat(64), ...env });
  const db = await openMigratedPglite();
  const account = await insertAccount(db, 'Test account');
  const { key } = await issueApiKey(db, account.id, 'test');
  const site = await insertSite(db, account.id);
  const app = await buildApp({ db, settings, logger: false, ...(options.now ? { now: options.now } : {}) });
  await app.ready();
  return {
    app,
    db,
    settings,
    accountId: account.id,
    apiKey: key,
    site,
    auth: { authorization: `Bearer ${key}` },
    async close() {
      await app.close();
      await db.close();
    },
  };
}
