/** Runs a started process until SIGINT or SIGTERM, then closes it cleanly (the store is always closed and unlocked). */

/** Something started that can print how to use it and be closed. */
export interface Started {
  /** What to print once it runs. */
  banner: string;
  close(): Promise<void>;
  log(message: string, fields: Record<string, unknown>): void;
}

/** Starts, prints the banner, and closes on the first signal; a failed start exits 1 with one readable line. */
export function runUntilSignal(start: () => Promise<Started>): void {
  let running: Started | undefined;
  let stopRequested = false;
  const stop = async (signal: string) => {
    if (stopRequested) return;
    stopRequested = true;
    // A signal during start-up is handled once the start finishes.
    if (!running) return;
    running.log('shutting down', { signal });
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
  start()
    .then(async (started) => {
      running = started;
      if (stopRequested) {
        await started.close();
        process.exit(0);
      }
      process.stdout.write(started.banner);
    })
    .catch((error: unknown) => {
      console.error(`cnv could not start: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
}
