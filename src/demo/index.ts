/**
 * The demo that `npm start` serves beside the service: a pretend customer site on its own origin whose signups travel
 * through the real loader, webhook, pairing and delivery to a local fake of the Google Ads API.
 *
 * Two steps, because the delivery worker must send to the fake from its first delivery:
 * 1. `startDemoDestination(settings)` before the app and the delivery worker are built: starts the fake and returns
 *    the settings to run the service with (Google Ads API base = the fake).
 * 2. `startDemo(...)` once the service listens: the idempotent demo setup through the REST API and hosted pages, then
 *    the demo site's own server.
 */
import { join } from 'node:path';
import type { Settings } from '../server/settings';
import type { Database } from '../server/db/db';
import { startFakeGoogleAds, type FakeGoogleAds } from './fake-google-ads';
import { ensureDemoSetup, DEMO, type DemoSetup } from './setup';
import { SignupDesk } from './signups';
import { buildDemoSite, type DemoSiteContext } from './site';

export { DEMO } from './setup';

/** Developer token the demo uses when none is configured: the fake only checks that one is sent. */
const DEMO_DEVELOPER_TOKEN = 'demo-developer-token';

/** The local stand-in for Google Ads, and the settings that point the service at it. */
export interface DemoDestination {
  /** The service's settings with the Google Ads API base (and, if unset, the developer token) of the fake. */
  settings: Settings;
  fake: FakeGoogleAds;
  close(): Promise<void>;
}

/** Starts the fake Google Ads API on a free loopback port; run the service with the returned settings. */
export async function startDemoDestination(settings: Settings): Promise<DemoDestination> {
  const fake = await startFakeGoogleAds();
  return {
    settings: {
      ...settings,
      googleAdsApiBase: fake.url,
      googleAdsDeveloperToken: settings.googleAdsDeveloperToken || DEMO_DEVELOPER_TOKEN,
    },
    fake,
    close: () => fake.close(),
  };
}

/** Where the demo reaches the service. */
export interface DemoServiceUrls {
  /** Where browsers load the loader from: the service's public URL. */
  public: string;
  /** The REST API and hosted pages, reachable from this process (the loopback address the service listens on). */
  api: string;
  /** The webhook bridge, reachable from this process (the demo backend reports there). */
  webhook: string;
}

/** A pino-style logger (Fastify's app.log fits). */
export interface DemoLogger {
  info(message: string): void;
  error(obj: unknown, message: string): void;
}

export interface StartDemoOptions {
  /** The service's settings (demoPort, host, dataDir). */
  settings: Settings;
  db: Database;
  /** From startDemoDestination; the demo closes it when it closes. */
  destination: DemoDestination;
  serviceUrls: DemoServiceUrls;
  log: DemoLogger;
}

/** The running demo. */
export interface RunningDemo {
  /** The demo site's address, for the start banner. */
  url: string;
  /** What the setup found or made: site, flow, API client. */
  setup: DemoSetup;
  /** The fake Google Ads API (its received requests are what the welcome page shows). */
  fake: FakeGoogleAds;
  close(): Promise<void>;
}

/** The demo site's origin: localhost (a different site from the service's 127.0.0.1, as in production). */
export function demoOrigin(port: number): string {
  return `http://localhost:${port}`;
}

/** Sets up the demo in cnv (creating only what is missing) and serves the demo site on settings.demoPort. */
export async function startDemo(options: StartDemoOptions): Promise<RunningDemo> {
  const { settings, destination, serviceUrls, log } = options;
  if (settings.demoPort === null) throw new Error('startDemo needs settings.demoPort (CNV_DEMO_PORT is off).');
  let context: DemoSiteContext | null = null;
  const app = await buildDemoSite({ context: () => context, uploads: destination.fake, log });
  try {
    // Listen first: the site's domain names its port, which with port 0 is known only once bound.
    await app.listen({ port: settings.demoPort, host: settings.host });
    const address = app.server.address();
    const origin = demoOrigin(typeof address === 'object' && address ? address.port : settings.demoPort);
    const setup = await ensureDemoSetup({
      db: options.db,
      apiBase: serviceUrls.api,
      demoOrigin: origin,
      credentialsFile: join(settings.dataDir, 'demo-store.json'),
      log,
    });
    const desk = new SignupDesk({
      webhookBaseUrl: serviceUrls.webhook,
      siteKey: setup.site.site_key,
      triggerKey: DEMO.triggerKey,
      webhookSecret: setup.webhookSecret,
    });
    context = { page: { serviceUrl: serviceUrls.public, siteKey: setup.site.site_key }, siteId: setup.site.id, api: setup.api, desk };
    log.info(`demo site on ${origin} (site key ${setup.site.site_key}); Google Ads uploads go to the local fake at ${destination.fake.url}`);
    return {
      url: origin,
      setup,
      fake: destination.fake,
      async close() {
        await app.close();
        await destination.close();
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}
