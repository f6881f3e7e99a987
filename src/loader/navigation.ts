/** Client-side navigations: a single-page app may land on a decorated URL without a page load. */
import { guard } from './guard';

/** Calls onNavigate after every history.pushState and on popstate (a replaceState keeps the page it replaces). */
export function watchNavigation(onNavigate: () => void): void {
  const notify = guard(onNavigate);
  const pushState = history.pushState;
  history.pushState = function (this: History, ...args: Parameters<History['pushState']>) {
    pushState.apply(this, args);
    notify();
  };
  addEventListener('popstate', notify);
}
