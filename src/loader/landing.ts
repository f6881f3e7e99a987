/**
 * The URL the document was navigated to. A router that runs before the async loader may already have stripped the
 * query from the address bar (replaceState): the navigation timing entry still names the URL the visitor landed on.
 */

/** The navigation entry's URL, or '' when the browser has none. */
export const navigationUrl = (): string => {
  const entry = performance.getEntriesByType('navigation')[0];
  return (entry && entry.name) || '';
};
