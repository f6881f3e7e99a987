/**
 * How the document was navigated to: the navigation timing entry (`performance.getEntriesByType('navigation')[0]`).
 * Its URL: a router that runs before the async loader may already have stripped the query from the address bar
 * (replaceState), the entry still names the URL the visitor landed on. Its type: whether the load was a new arrival
 * (start.ts reads it).
 */

/** The navigation entry, or an empty one when the browser has none. */
export const navigationEntry = (): Partial<PerformanceNavigationTiming> => {
  return performance.getEntriesByType('navigation')[0] || {};
};

/** The navigation entry's URL, or '' when the browser has none. */
export const navigationUrl = (): string => {
  return navigationEntry().name || '';
};
