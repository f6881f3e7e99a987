/**
 * The whole service in one call: store (opened, migrated), the HTTP app on HOST:PORT, the webhook-only listener when
 * CNV_WEBHOOK_PORT is set, the first-run bootstrap (once listening, so a start that cannot listen creates no key it
 * could never show), a dashboard sign-in link, and the delivery worker. `npm start` and tests use this.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pretty from 'pino-pretty';
import { buildApp, type BuildAppOptions } from './app';
import type { Settings } from './settings';
import type { Database, StoreReopened } from './db/db';
import { openStore, redactDatabaseUrl } from './db/open-store';
import { serviceLoggerOptions } from './logging';
import { oldestSite } from './api/sites';
import { bootstrap } from './accounts';
import { toSiteRecord, type SiteRecord } from './api/sites';
import { intakeBusy, startDeliveryWorker } from './delivery';
import { findUnreadableSecrets, unreadableSecretsWarning } from './unreadable-secrets';
import { looksSealed, secretKeyFile, serviceSecretBox } from './db/secret-box';
import { startNotificationWorker } from './notifications';
import { startSnapshotRetention } from './collector';
import { startIdentityRetention } from './privacy';
import { QUIET_AFTER_BURST_MS, QUIET_BEFORE_VACUUM_MS, startStoreMaintenance } from './db/maintenance';
import { requestsQuietFor } from './http/request-activity';
import { StoreTrouble } from './db/store-trouble';
import { recordPublicUrl } from './db/service-facts';
import { noteServiceAddress } from './db/data-dir-lock';
import { issueSignInLink } from './dashboard';
import { explainListenError, explainStoreError } from './start-errors';
import { createRateLimits } from './rate-limits';
import { sealWebhookSecretsAtStart } from './webhook';
import { sealHandoffTokensAtStart } from './api/handoffs';

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
  /** A one-time dashboard sign-in link: always on first start, on later starts when asked for (a terminal watches). */
  dashboardLink?: { url: string; expiresAt: Date };
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
  /** Told each step of the start as it begins (the first start creates the embedded store, which takes a while). */
  onProgress?: (step: string) => void;
  /** Issue a dashboard sign-in link on a later start too (the first start always issues one). */
  dashboardLinkEveryStart?: boolean;
}

let terminalDefaults: { progress: (step: string) => void; dashboardLinkEveryStart: boolean } | undefined;

/**
 * For the entry points (`npm start`, the service alone), not tests: every later startService of this process without
 * its own options prints its steps (to stderr, so a JSON log on stdout stays JSON) and, when stdout is a terminal,
 * issues a fresh dashboard sign-in link on every start.
 */
export function useTerminalDefaults(write: (text: string) => unknown = (text) => process.stderr.write(text)): void {
  terminalDefaults = { progress: (step) => write(`cnv: ${step}\n`), dashboardLinkEveryStart: Boolean(process.stdout.isTTY) };
}

/** Human-readable logs on a terminal (pino-pretty), JSON lines otherwise or when LOG_FORMAT=json. */
export function defaultLoggerOptions(settings: Pick<Settings, 'logLevel' | 'logFormat'>, isTerminal = Boolean(process.stdout.isTTY)): BuildAppOptions['logger'] {
  const readable = settings.logFormat === 'pretty' || (settings.logFormat === undefined && isTerminal);
  if (!readable) return serviceLoggerOptions({ level: settings.logLevel });
  const stream = pretty({ colorize: isTerminal, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: true, sync: true });
  return serviceLoggerOptions({ level: settings.logLevel, stream } as unknown as BuildAppOptions['logger']);
}

function addressOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (!address || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** What opening the store will do, in words (the first open of an embedded store creates it, the slow part). */
function storeStep(settings: Settings): string {
  if (settings.databaseUrl) return `connecting to PostgreSQL at ${redactDatabaseUrl(settings.databaseUrl)} (DATABASE_URL) and migrating it…`;
  return existsSync(join(settings.dataDir, 'PG_VERSION'))
    ? `opening the embedded store in ${settings.dataDir}…`
    : `creating the embedded store in ${settings.dataDir} (first start only: this takes up to half a minute)…`;
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/**
 * A key made now opens nothing already sealed: on a store that holds sealed secrets (another process's, or a data
 * directory whose secret.key was lost), a start without CNV_SECRET_KEY would answer every report 401 and mark every
 * destination reauthorization_required at its next delivery. Refused, naming the setting; a key set on purpose (a new
 * one, the old being lost) starts, with the warnings of a changed key.
 */
async function refuseKeyMadeForSealedStore(db: Database, settings: Settings): Promise<void> {
  // Only sealed values count: an older version's webhook secrets in clear are sealed by this start, with this key.
  const sealedIn = async (sql: string) => (await db.query<{ value: string }>(sql)).filter((row) => looksSealed(row.value)).length;
  const counts: Array<[number, string]> = [
    [await sealedIn('select credentials as value from destinations where credentials is not null'), 'destination credential(s)'],
    [await sealedIn('select secret as value from trigger_sources'), 'webhook secret(s)'],
    [await sealedIn('select secret as value from notification_endpoints'), 'notification endpoint secret(s)'],
  ];
  const found = counts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  if (found.length === 0) return;
  throw new Error(
    `CNV_SECRET_KEY is not set and ${secretKeyFile(settings.dataDir)} (CNV_DATA_DIR) does not exist, but the store holds ${found.join(', ')} sealed with a key: ` +
      'a key made now would open none of them (every webhook report answered 401, every destination marked reauthorization_required). ' +
      (settings.databaseUrl ? 'Set CNV_SECRET_KEY to the key the other processes on this database use' : 'Put back the secret.key of this data directory from a backup, or set CNV_SECRET_KEY to the key it held') +
      '. If that key is lost, set CNV_SECRET_KEY to a new one (openssl rand -base64 32) on purpose: each destination must then be connected again and each webhook secret rotated.',
  );
}

/** Starts the service; resolves once it listens. */
export async function startService(settings: Settings, options: StartServiceOptions = {}): Promise<RunningService> {
  const progress = options.onProgress ?? terminalDefaults?.progress ?? (() => undefined);
  const linkEveryStart = options.dashboardLinkEveryStart ?? terminalDefaults?.dashboardLinkEveryStart ?? false;
  const started = Date.now();
  // Whether this start would make the credentials key (neither CNV_SECRET_KEY nor a key file yet): looked at before
  // anything reads the key, which creates the file.
  const keyWouldBeMade = !settings.secretKey && !existsSync(secretKeyFile(settings.dataDir));
  progress(storeStep(settings));
  // The embedded store opened again after a failure (db.ts) is logged once the service's logger exists.
  let logReopened: (event: StoreReopened) => void = () => undefined;
  const onReopened = (event: StoreReopened) => logReopened(event);
  const store = await openStore(settings, 'the cnv service', { pgliteThread: 'worker', onReopened }).catch((error: unknown) => {
    throw explainStoreError(error, settings);
  });
  progress(`store ready (${seconds(started)})`);
  const { db } = store;
  // Every logger of the service redacts (src/server/logging.ts); createHttpApp applies the same rules to a caller's option.
  const logger = options.logger ?? defaultLoggerOptions(settings);
  const closers: Array<() => Promise<void>> = [() => store.close()];
  // The listeners close first (a rolling restart: new connections go to the other instances at once, and what is in
  // flight finishes with the store still open), then the workers, then the store.
  const listeners: FastifyInstance[] = [];
  const closeAll = async () => {
    await Promise.all(listeners.splice(0).map((listener) => listener.close()));
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    if (keyWouldBeMade) await refuseKeyMadeForSealedStore(db, settings);
    // One set of rate limits for the process: the webhook-only listener counts with the main one.
    const rateLimits = createRateLimits({ settings, db });
    // One count of the store's refusals for the process: each listener's health check says what requests met on any.
    const storeTrouble = new StoreTrouble();
    const app = await buildApp({ db, settings, logger, rateLimits, storeTrouble });
    listeners.push(app);
    logReopened = ({ reason, ms }) =>
      app.log.error(
        { reason, ms },
        'the embedded store failed (its thread ended, or a statement was cut short) and was opened again: what was committed is kept; the statements in flight failed (their requests were answered 503 unless their write was tried again)',
      );
    rateLimits.start(app.log);
    closers.push(() => rateLimits.stop());
    if (store.permissions) app.log.info(store.permissions);
    if (store.upgradedWith) {
      app.log.info({ migrations: store.upgradedWith }, 'the store was upgraded to this version of cnv: migrations applied');
    }
    // Before anything listens: webhook secrets an older version stored in clear are sealed (once; see secret-upgrade.ts).
    const webhookSecrets = await sealWebhookSecretsAtStart(db, serviceSecretBox(settings));
    const handoffTokens = await sealHandoffTokensAtStart(db, serviceSecretBox(settings));
    if (handoffTokens > 0) app.log.info({ sealed: handoffTokens }, 'handoff links stored in clear by an earlier version were sealed with the service key');
    if (webhookSecrets.sealed > 0) {
      app.log.info({ sealed: webhookSecrets.sealed }, 'webhook secrets stored in clear by an earlier version were sealed with the service key');
    }
    if (webhookSecrets.notOpening > 0) {
      app.log.warn(
        { trigger_sources: webhookSecrets.notOpening },
        `${webhookSecrets.notOpening} webhook secret(s) do not open with this CNV_SECRET_KEY (the key changed, or the store was restored without its key): their webhooks answer 401 no_signature_match until each is rotated (the dashboard's site page, \`cnv webhook-secret rotate --site …\`, or a connect_trigger_source handoff)`,
      );
    }
    if (['0.0.0.0', '[::]'].includes(new URL(settings.publicUrl).hostname)) {
      app.log.warn(
        { publicUrl: settings.publicUrl },
        `the public URL is ${settings.publicUrl} (HOST listens on every interface and CNV_PUBLIC_URL is not set): the snippet, handoff links and webhook URLs carry an address no browser or backend can reach; set CNV_PUBLIC_URL to the address people use`,
      );
    }
    if (store.newerMigrations) {
      app.log.warn(
        { migrations: store.newerMigrations },
        'the store was last used by a newer version of cnv (it holds migrations this version does not have): this version runs on it, as migrations only add; start the newer version again, or restore the backup taken before the upgrade',
      );
    }
    if (settings.trustProxy === true) {
      // Every X-Forwarded-For hop trusted: the client address is the header's first entry. A proxy appends the address it
      // saw after what the visitor sent (nginx's $proxy_add_x_forwarded_for, most load balancers), so that entry is the
      // visitor's to choose, as it is for any client that reaches this port directly.
      app.log.warn(
        { host: settings.host },
        "CNV_TRUST_PROXY is true: the client address (rate limits per address, the visitor IP sent to Meta, TikTok and Reddit) is the first X-Forwarded-For entry, which a visitor writes whenever the proxy appends to the header and any client that reaches this port directly chooses. Set CNV_TRUST_PROXY to your proxies' addresses (e.g. 10.0.0.0/8; the default, loopback, trusts a proxy on this machine) or their number of hops; without a proxy, set it to false",
      );
    }
    // Secrets sealed under another key (a restore, a changed CNV_SECRET_KEY): said once now, handled row by row later.
    const unreadable = unreadableSecretsWarning(await findUnreadableSecrets(db, serviceSecretBox(settings)));
    if (unreadable) app.log.warn(unreadable.obj, unreadable.msg);
    if (store.frozenDatabases) {
      app.log.info({ databases: store.frozenDatabases }, 'embedded store: template databases frozen against transaction id wraparound');
    }
    progress(`listening on ${settings.host}:${settings.port}…`);
    await app.listen({ host: settings.host, port: settings.port }).catch((error: unknown) => {
      throw explainListenError(error, 'PORT', settings.host, settings.port);
    });

    let webhookListening: string | null = null;
    if (settings.webhookPort) {
      const hooks = await buildApp({ db, settings, logger, surfaces: ['webhook'], rateLimits, storeTrouble });
      listeners.push(hooks);
      await hooks.listen({ host: settings.host, port: settings.webhookPort }).catch((error: unknown) => {
        throw explainListenError(error, 'CNV_WEBHOOK_PORT', settings.host, settings.webhookPort!);
      });
      webhookListening = addressOf(hooks);
    }

    // The address this service's links carry, for `cnv` on the same store (a port 0 URL names no address anyone can use).
    if (new URL(settings.publicUrl).port !== '0') {
      await recordPublicUrl(db, settings.publicUrl);
      if (!settings.databaseUrl) noteServiceAddress(settings.dataDir, settings.publicUrl);
    }

    // Only now that every listener is up: a key made by a start that then failed would never be shown to anyone.
    const first = await bootstrap(db);
    if (first.created) progress('first start: created an account, its API key and a site');
    const siteRow = first.created ? first.site : await oldestSite(db);
    if (!siteRow) throw new Error('The database has accounts but no site: create one with `cnv sites create --name …`.');
    const dashboardLink =
      first.created || linkEveryStart ? await issueSignInLink(db, settings, siteRow.account_id) : undefined;

    const worker = startDeliveryWorker({ db, settings, log: app.log });
    closers.push(() => worker.stop());
    // Its own loop: a slow notification receiver never slows delivery to the ad platforms.
    const notifier = startNotificationWorker({ db, settings, log: app.log });
    closers.push(() => notifier.stop());
    if (settings.snapshotRetentionDays !== null) {
      const retention = startSnapshotRetention({ db, retentionDays: settings.snapshotRetentionDays, log: app.log });
      closers.push(() => retention.stop());
    }
    const identityRetention = startIdentityRetention({ db, retentionDays: settings.identityRetentionDays, log: app.log });
    closers.push(() => identityRetention.stop());
    // The embedded store's vacuum and statistics (a PostgreSQL server's autovacuum does this there).
    // Put off while reports arrive in a burst (an ANALYZE holds the embedded store's one connection); its vacuums of
    // dead rows also wait for a moment without requests.
    const maintenance = startStoreMaintenance({
      db,
      log: app.log,
      intakeBusy: () => intakeBusy(db, { withinMs: QUIET_AFTER_BURST_MS }),
      requestsQuiet: () => requestsQuietFor(db, QUIET_BEFORE_VACUUM_MS),
    });
    closers.push(() => maintenance.stop());
    progress(`ready (${seconds(started)})`);

    let closed: Promise<void> | undefined;
    return {
      urls: { listening: addressOf(app), api: settings.publicUrl, webhook: settings.webhookBaseUrl, webhookListening },
      ...(first.created ? { apiKey: first.apiKey } : {}),
      ...(dashboardLink ? { dashboardLink } : {}),
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
