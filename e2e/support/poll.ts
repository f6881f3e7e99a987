/**
 * The intervals of `expect.poll` where the condition is local and cheap to check (the requests a context recorded, a
 * cookie, a stored row read over loopback). Playwright's default backs off to a check a second, so a condition met
 * 120 ms after the first check was seen up to a second later, in every such wait of the shared service's lane, the
 * longest. A bound on a condition, as every poll here: never a timing assertion.
 */
export const QUICK_POLL = { intervals: [25, 50, 100] };
