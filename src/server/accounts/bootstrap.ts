/** First start: an account, its API key and a default site, created once however many processes start together. */
import type { Database } from '../db/db';
import { insertAccount, issueApiKey, type Account } from './sql';
import { insertSite, type SiteRow } from '../api/sites';

/** Name of the account made on first start. */
export const BOOTSTRAP_ACCOUNT_NAME = 'My Account';

export type BootstrapResult =
  | { created: true; account: Account; apiKey: string; site: SiteRow }
  | { created: false };

/**
 * Creates the first account, an API key (returned in clear this once; only its hash is stored) and a site with the
 * spec's defaults, when the database has no account yet. A transaction-scoped advisory lock serialises concurrent
 * starters on a shared PostgreSQL, so a second start (or a simultaneous one) creates nothing.
 */
export async function bootstrap(db: Database): Promise<BootstrapResult> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock(7412002)');
    const [existing] = await tx.query('select 1 from accounts limit 1');
    if (existing) return { created: false };
    const account = await insertAccount(tx, BOOTSTRAP_ACCOUNT_NAME);
    const { key } = await issueApiKey(tx, account.id, 'first start');
    const site = await insertSite(tx, account.id);
    return { created: true, account, apiKey: key, site };
  });
}
