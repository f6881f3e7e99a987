/** Client-side navigations: a single-page app may land on a decorated URL without a page load. */
import { guard } from './guard';
import { notifyAfter } from './notify-after';

/** Calls onNavigate after every history.pushState and on popstate (a replaceState keeps the page it replaces). */
export function watchNavigation(onNavigate: () => void): void {
  notifyAfter(history, 'pushState', onNavigate);
  addEventListener('popstate', guard(onNavigate));
}
