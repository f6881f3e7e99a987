/**
 * How the demo's own account is known: by its name. The demo setup finds its account again by this name on every
 * start (src/demo/setup.ts), and `cnv` leaves it out when it picks the account a command works on by default, so a
 * store `npm start` made (the first account, the user's, and the demo's) still has one account to pick.
 * Kept apart from the setup so the command line reads it without loading the demo.
 */

/** The name of the demo's own account (never the account the first start created). */
export const DEMO_ACCOUNT_NAME = 'cnv demo (Demo store)';

/** Whether an account is the one `npm start`'s demo made for itself. */
export function isDemoAccount(account: { name: string }): boolean {
  return account.name === DEMO_ACCOUNT_NAME;
}
