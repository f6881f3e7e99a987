/**
 * Retention of identity: email, phone and names (and the customer id) are what ad platforms match on, needed while a
 * conversion and its later stages may still be delivered, and not after. Past CNV_IDENTITY_RETENTION_DAYS (at least
 * 90: later stages look back 90 days) they are cleared from events, reports and form submissions, in chunks so the
 * embedded store never stalls the hot paths, with the platform cookies (_fbc, _fbp…) an event shows: they identify a
 * browser. Everything else of the row (the conversion, its click ids, its delivery results) stays. The email and
 * status filters of GET /v1/events search the same window.
 */
import type { Database } from '../db/db';
import { clearIdentityBefore, IDENTITY_TABLES } from './sql';
import { inChunks, startPeriodic } from '../periodic';

/** Rows changed per statement. */
const CHUNK = 500;

/** The start of the identity window at `now`: rows stored before it hold no identity. */
export function identityWindowStart(retentionDays: number, now: Date = new Date()): Date {
  return new Date(now.getTime() - retentionDays * 86_400_000);
}

/** What one purge cleared, per table. */
export type IdentityPurge = Record<(typeof IDENTITY_TABLES)[number], number>;

/** Clears identity stored more than `retentionDays` before `now`; returns how many rows of each table were cleared. */
export async function clearExpiredIdentity(db: Database, retentionDays: number, now: Date = new Date()): Promise<IdentityPurge> {
  const cutoff = identityWindowStart(retentionDays, now);
  const cleared: IdentityPurge = { events: 0, reports: 0, form_submissions: 0 };
  for (const table of IDENTITY_TABLES) cleared[table] = await inChunks((limit) => clearIdentityBefore(db, table, cutoff, limit), CHUNK);
  return cleared;
}

export interface IdentityRetentionOptions {
  db: Database;
  retentionDays: number;
  log: { info(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** How often to purge; hourly by default. */
  intervalMs?: number;
  /** The clock (tests). */
  now?: () => Date;
}

/** Purges at start and then every interval until stopped. The log line carries counts only, never a value. */
export function startIdentityRetention(options: IdentityRetentionOptions): { stop(): Promise<void> } {
  return startPeriodic(
    async () => {
      const cleared = await clearExpiredIdentity(options.db, options.retentionDays, options.now?.() ?? new Date());
      if (cleared.events + cleared.reports + cleared.form_submissions > 0) {
        options.log.info({ cleared, retentionDays: options.retentionDays }, 'identity past its retention cleared');
      }
    },
    options.intervalMs ?? 3_600_000,
    options.log,
    { name: 'identity retention', failure: 'identity retention failed; it runs again at the next interval' },
  );
}
