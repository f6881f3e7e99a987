/**
 * The whole service in one call: store (opened, migrated, bootstrapped on first start), the HTTP app on HOST:PORT,
 * the webhook-only listener when CNV_WEBHOOK_PORT is set, and the delivery worker. `npm start` and tests use this.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildAppOptions } from './app';
import type { Settings } from './settings';
import type { Database } from './db/db';
import { openStore } from './db/open-store';
import { serviceLoggerOptions } from './logging';
import { oldestSite } from './api/sites';
import { bootstrap } from './accounts';
import { toSiteRecord, type SiteRecord } from './api/sites';
import { startDeliveryWorker } from './delivery';
import { startSnapshotRetention } from './collector';

export interface ServiceUrls {
  /** Where the app listens (loopback address with the real port). */
  listening: string;
  /** Base of the REST API ({base_url}), hosted pages and loader: settings.publicUrl. */
  api: string;
  /** Base of the webhook bridge ({webhook_base_url}). */
  webhook: string;
  /** Where the webhook-only listener listens, when there is one. */
  webhookListening: string | null;
}

export interface RunningService {
  urls: ServiceUrls;
  /** The API key made on first start, in clear this once; undefined on later starts. */
  apiKey?: string;
  /** The first site (the one the first start made). */
  site: SiteRecord;
  /** Where the data lives (data directory, or the PostgreSQL URL without its password). */
  storeLocation: string;
  db: Database;
  app: FastifyInstance;
  /** Stops the worker, closes the listeners, then the store. Safe to call twice. */
  close(): Promise<void>;
}

export interface StartServiceOptions {
  /** Fastify logger option (the redaction of src/server/logging.ts is added to it); default: pino at settings.logLevel. */
  logger?: BuildAppOptions['logger'];
}

function addressOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (!address || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Starts the service; resolves once it listens. */
export async function startService(settings: Settings, options: StartServiceOptions = {}): Promise<RunningService> {
  const store = await openStore(settings, 'the cnv service');
  const { db } = store;
  // Every logger of the service redacts (src/server/logging.ts); createHttpApp applies the same rules to a caller's option.
  const logger = options.logger ?? serviceLoggerOptions({ level: settings.logLevel });
  const closers: Array<() => Promise<void>> = [() => store.close()];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    const first = await bootstrap(db);
    const siteRow = first.created ? first.site : await oldestSite(db);
    if (!siteRow) throw new Error('The database has accounts but no site: create one with `cnv sites create --name …`.');

    const app = await buildApp({ db, settings, logger });
    closers.push(() => app.close());
    await app.listen({ host: settings.host, port: settings.port });

    let webhookListening: string | null = null;
    if (settings.webhookPort) {
      const hooks = await buildApp({ db, settings, logger, surfaces: ['webhook'] });
      closers.push(() => hooks.close());
      await hooks.listen({ host: settings.host, port: settings.webhookPort });
      webhookListening = addressOf(hooks);
    }

    const worker = startDeliveryWorker({ db, settings, log: app.log });
    closers.push(() => worker.stop());
    if (settings.snapshotRetentionDays !== null) {
      const retention = startSnapshotRetention({ db, retentionDays: settings.snapshotRetentionDays, log: app.log });
      closers.push(() => retention.stop());
    }

    let closed: Promise<void> | undefined;
    return {
      urls: { listening: addressOf(app), api: settings.publicUrl, webhook: settings.webhookBaseUrl, webhookListening },
      ...(first.created ? { apiKey: first.apiKey } : {}),
      site: toSiteRecord(siteRow),
      storeLocation: store.location,
      db,
      app,
      close: () => (closed ??= closeAll()),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
