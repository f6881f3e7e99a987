/** `npm start`: loads the settings, starts the service (and its demo), prints how to use it, and shuts down cleanly on a signal. */
import { loadSettings } from './settings';
import { startupBanner } from './banner';
import { startServiceWithDemo, type ServiceWithDemo } from '../demo/with-service';
import { demoBannerLines } from '../demo/banner';

async function main(): Promise<void> {
  const settings = loadSettings();
  let running: ServiceWithDemo | undefined;
  let stopRequested = false;
  const stop = async (signal: string) => {
    if (stopRequested) return;
    stopRequested = true;
    // A signal during start-up is handled once the start finishes, so the store is always closed (and unlocked).
    if (!running) return;
    running.service.app.log.info({ signal }, 'shutting down');
    try {
      await running.close();
      process.exit(0);
    } catch (error) {
      console.error('error while shutting down:', error);
      process.exit(1);
    }
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  // The service, and unless CNV_DEMO_PORT=off the demo site beside it (its fake Google Ads API starts first).
  running = await startServiceWithDemo(settings);
  if (stopRequested) {
    await running.close();
    process.exit(0);
  }
  const demo = running.demo ? demoBannerLines(running.demo).join('\n') + '\n' : '';
  process.stdout.write(startupBanner(running.service) + '\n' + demo);
}

main().catch((error: unknown) => {
  console.error(`cnv could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
