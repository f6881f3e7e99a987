/**
 * Retention of browser snapshots. A correlation token can be reported only while its cookie lives (at most a day), and
 * a paired event keeps its own copy of the click data, so a snapshot older than the retention period can no longer
 * serve any report: it is deleted, in small chunks so the embedded store never stalls the hot paths.
 *
 * The row goes whole, so this also purges the personal data stored with it: the visitor's user agent and IP address
 * (kept for Meta's `client_user_agent` and `client_ip_address`, never copied into an event) and the consent signals.
 * "Last written" is updated_at, which a later snapshot of the same token refreshes: the clock restarts with it.
 */
import type { Database } from '../db/db';
import { lastSnapshotIdReceivedBefore, purgeSnapshotsBefore } from './sql';
import { purgeFormSubmissionsBefore } from './form-sql';
import { inChunks, startPeriodic } from '../periodic';
import { vacuumAfterPurge } from '../db/maintenance';

/** Rows deleted per statement. */
const CHUNK = 500;

/**
 * Deletes every snapshot last written, and every form submission received, more than `retentionDays` before `now`
 * (form submissions hold raw identity fields and the visitor's user agent and IP address); returns how many went. On
 * the embedded store the table is then vacuumed, so the space of the deleted rows serves the next ones.
 */
export async function purgeExpiredSnapshots(db: Database, retentionDays: number, now: Date = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  const upToId = await lastSnapshotIdReceivedBefore(db, cutoff);
  const snapshots = upToId === null ? 0 : await inChunks((limit) => purgeSnapshotsBefore(db, cutoff, limit, upToId), CHUNK);
  if (snapshots > 0) await vacuumAfterPurge(db, 'snapshots');
  const submissions = await inChunks((limit) => purgeFormSubmissionsBefore(db, cutoff, limit), CHUNK);
  if (submissions > 0) await vacuumAfterPurge(db, 'form_submissions');
  return snapshots + submissions;
}

export interface RetentionOptions {
  db: Database;
  retentionDays: number;
  log: { info(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** How often to purge; hourly by default. */
  intervalMs?: number;
}

/** Purges at start and then every interval until stopped. */
export function startSnapshotRetention(options: RetentionOptions): { stop(): Promise<void> } {
  return startPeriodic(
    async () => {
      const deleted = await purgeExpiredSnapshots(options.db, options.retentionDays);
      if (deleted > 0) options.log.info({ deleted, retentionDays: options.retentionDays }, 'expired snapshots deleted');
    },
    options.intervalMs ?? 3_600_000,
    options.log,
    { name: 'snapshot retention', failure: 'snapshot retention failed; it runs again at the next interval' },
  );
}
