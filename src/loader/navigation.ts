/** Client-side navigations: a single-page app may land on a decorated URL without a page load. */
import { guard } from './guard';
import { notifyAfter } from './notify-after';

/**
 * Calls onNavigate (guarded) after every history.pushState, without an argument, and on popstate (a history traversal:
 * back, forward) with its event. A replaceState keeps the page it replaces.
 */
export const watchNavigation = (onNavigate: (traversal?: PopStateEvent) => void): void => {
  const notify = guard(onNavigate);
  notifyAfter(history, 'pushState', notify);
  addEventListener('popstate', notify);
};
