/**
 * What `npm start` runs: the service and, unless CNV_DEMO_PORT is off, the demo beside it. The fake ad platforms start
 * first, so the service sends every platform call (OAuth and deliveries) to them from its first request.
 */
import { createServer } from 'node:net';
import type { Settings } from '../server/settings';
import { startService, type RunningService, type ServiceUrls, type StartServiceOptions } from '../server/service';
import { startDemo, startDemoDestinations, type DemoServiceUrls, type RunningDemo } from './index';

export interface ServiceWithDemo {
  service: RunningService;
  /** The settings the service runs with (with the demo, every ad platform pointed at its local fake). */
  settings: Settings;
  /** null when CNV_DEMO_PORT is off. */
  demo: RunningDemo | null;
  /** Closes the demo, then the service. Safe to call twice. */
  close(): Promise<void>;
}

/** A URL this process can reach for a listening address (a wildcard address is reached on loopback). */
export function reachable(listening: string): string {
  return listening.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
}

/** Where the demo reaches the service: browsers through the public URL, the demo's own calls on the listener. */
export function demoServiceUrls(urls: ServiceUrls): DemoServiceUrls {
  const local = reachable(urls.listening);
  return { public: urls.api, api: local, webhook: urls.webhookListening ? reachable(urls.webhookListening) : local };
}

/** Starts the service and, when settings.demoPort is set, the demo; a demo that cannot start stops everything. */
export async function startServiceWithDemo(settings: Settings, options: StartServiceOptions = {}): Promise<ServiceWithDemo> {
  // A taken demo port stops the start before the service creates anything (its first start prints the only API key).
  if (settings.demoPort !== null) await portIsFree(settings.host, settings.demoPort).catch((error: unknown) => Promise.reject(demoStartError(error, settings)));
  const destinations = settings.demoPort === null ? null : await startDemoDestinations(settings);
  let service: RunningService;
  try {
    service = await startService(destinations?.settings ?? settings, options);
  } catch (error) {
    await destinations?.close();
    throw error;
  }
  let demo: RunningDemo | null = null;
  if (destinations) {
    try {
      demo = await startDemo({
        settings: destinations.settings,
        db: service.db,
        destinations,
        serviceUrls: demoServiceUrls(service.urls),
        log: service.app.log,
      });
    } catch (error) {
      await destinations.close();
      await service.close();
      throw demoStartError(error, settings);
    }
  }
  let closed: Promise<void> | undefined;
  return {
    service,
    settings: destinations?.settings ?? settings,
    demo,
    close: () =>
      (closed ??= (async () => {
        await demo?.close();
        await service.close();
      })()),
  };
}

function demoStartError(error: unknown, settings: Settings): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return new Error(`the demo's port ${settings.demoPort} is in use: set CNV_DEMO_PORT to a free port, or CNV_DEMO_PORT=off to run without the demo.`);
  }
  return new Error(`the demo could not start (CNV_DEMO_PORT=off runs without it): ${(error as Error).message}`, { cause: error });
}

/** Resolves when `port` can be listened on (it is released at once); rejects with the listen error otherwise. */
function portIsFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
