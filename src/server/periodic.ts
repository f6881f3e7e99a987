/** Background housekeeping of the service: a task run at start and then every interval, and work done in chunks. */
import { storeAwareErrorLog } from './db/store-trouble';

export interface PeriodicLog {
  error(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/**
 * Runs `task` now and then every `intervalMs` (the timer never keeps the process alive); a run never overlaps the
 * previous one, and a failure is logged as `failure` and retried at the next interval: every time, except while the
 * store cannot work (its disk full, unreachable), said as it starts, once a minute while it lasts, and once a run
 * works again (as `name`). `stop` waits for a run under way.
 */
export function startPeriodic(
  task: () => Promise<void>,
  intervalMs: number,
  log: PeriodicLog,
  { name, failure }: { name: string; failure: string },
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const loopLog = storeAwareErrorLog(log, name);
  const run = () => {
    running = running
      .then(task)
      .then(loopLog.worked, (error: unknown) => loopLog.failed(error, {}, failure));
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** Repeats `step(chunk)` until a call handles fewer than `chunk` rows; returns the total handled. */
export async function inChunks(step: (limit: number) => Promise<number>, chunk: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step(chunk);
    total += n;
    if (n < chunk) return total;
  }
}
