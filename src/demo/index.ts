/**
 * The demo that `npm start` serves beside the service: a pretend customer site on its own origin whose signups travel
 * through the real loader, webhook, pairing and delivery to local fakes of six ad platforms (Google's Data Manager
 * API, Meta's Conversions API, Microsoft Advertising, LinkedIn's Conversions API, each with its OAuth server where it
 * has one, Reddit's Conversions API and TikTok's Events API).
 *
 * Two steps, because the service must call the fakes from its first request:
 * 1. `startDemoDestinations(settings)` before the app and the delivery worker are built: starts the fakes and returns
 *    the settings to run the service with (every platform's API base, OAuth URLs and client = the fakes').
 * 2. `startDemo(...)` once the service listens: the idempotent demo setup through the REST API and hosted pages
 *    (each platform connected through its sign-in), then the demo site's own server.
 */
import { join } from 'node:path';
import type { Settings } from '../server/settings';
import type { Database } from '../server/db/db';
import { serviceSecretBox } from '../server/db/secret-box';
import { settingsForDemoPlatforms, startDemoAdPlatforms, type DemoAdPlatforms } from './ad-platforms';
import { platformRequestFinder } from './platform-requests';
import { ensureDemoSetup, DEMO, type DemoSetup } from './setup';
import { SignupDesk } from './signups';
import { buildDemoSite, type DemoSiteContext } from './site';

export { DEMO } from './setup';
export { DEMO_ACCOUNTS, type DemoAdPlatforms } from './ad-platforms';

/** The local stand-ins for the ad platforms, and the settings that point the service at them. */
export interface DemoDestinations {
  /** The service's settings with every platform pointed at its fake (the production defaults stay the real hosts). */
  settings: Settings;
  fakes: DemoAdPlatforms;
  close(): Promise<void>;
}

/** Starts the four fake ad platforms on free loopback ports; run the service with the returned settings. */
export async function startDemoDestinations(settings: Settings): Promise<DemoDestinations> {
  const fakes = await startDemoAdPlatforms(settings.meta.apiVersion);
  return { settings: settingsForDemoPlatforms(settings, fakes), fakes, close: () => fakes.close() };
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
  /** From startDemoDestinations; the demo closes them when it closes. */
  destinations: DemoDestinations;
  serviceUrls: DemoServiceUrls;
  log: DemoLogger;
}

/** The running demo. */
export interface RunningDemo {
  /** The demo site's address, for the start banner. */
  url: string;
  /** What the setup found or made: site, flow, API client. */
  setup: DemoSetup;
  /** The fake ad platforms (their received requests are what the welcome page shows). */
  fakes: DemoAdPlatforms;
  close(): Promise<void>;
}

/** The demo site's origin: localhost (a different site from the service's 127.0.0.1, as in production). */
export function demoOrigin(port: number): string {
  return `http://localhost:${port}`;
}

/** Where each fake listens, for the log and the banner. */
export function fakeUrls(fakes: DemoAdPlatforms): string {
  return (
    `Google ${fakes.google.url}, Meta ${fakes.meta.url}, Microsoft Advertising ${fakes.microsoft.url}, LinkedIn ${fakes.linkedin.url}, ` +
    `Reddit ${fakes.reddit.url}, TikTok ${fakes.tiktok.url}`
  );
}

/** Sets up the demo in cnv (creating only what is missing) and serves the demo site on settings.demoPort. */
export async function startDemo(options: StartDemoOptions): Promise<RunningDemo> {
  const { settings, destinations, serviceUrls, log } = options;
  if (settings.demoPort === null) throw new Error('startDemo needs settings.demoPort (CNV_DEMO_PORT is off).');
  let context: DemoSiteContext | null = null;
  const app = await buildDemoSite({ context: () => context, requestsOf: platformRequestFinder(destinations.fakes), log });
  try {
    // Listen first: the site's domain names its port, which with port 0 is known only once bound.
    await app.listen({ port: settings.demoPort, host: settings.host });
    const address = app.server.address();
    const origin = demoOrigin(typeof address === 'object' && address ? address.port : settings.demoPort);
    const setup = await ensureDemoSetup({
      db: options.db,
      box: serviceSecretBox(settings),
      apiBase: serviceUrls.api,
      demoOrigin: origin,
      credentialsFile: join(settings.dataDir, 'demo-store.json'),
      log,
    });
    const desk = new SignupDesk(
      { webhookBaseUrl: serviceUrls.webhook, siteKey: setup.site.site_key, triggerKey: DEMO.triggerKey, webhookSecret: setup.webhookSecret },
      { key: DEMO.stageTriggerKey, ...DEMO.paidPlan },
    );
    context = { page: { serviceUrl: serviceUrls.public, siteKey: setup.site.site_key }, siteId: setup.site.id, api: setup.api, desk };
    log.info(`demo site on ${origin} (site key ${setup.site.site_key}); the ad platforms are local fakes: ${fakeUrls(destinations.fakes)}`);
    return {
      url: origin,
      setup,
      fakes: destinations.fakes,
      async close() {
        await app.close();
        await destinations.close();
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}
