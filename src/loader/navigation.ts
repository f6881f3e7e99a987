/** Client-side navigations: a single-page app may land on a decorated URL without a page load. */
import { guard } from './guard';
import { notifyAfter } from './notify-after';

/** Calls onNavigate (guarded) after every history.pushState and on popstate (a replaceState keeps the page it replaces). */
export const watchNavigation = (onNavigate: () => void): void => {
  const notify = guard(onNavigate);
  notifyAfter(history, 'pushState', notify);
  addEventListener('popstate', notify);
};
