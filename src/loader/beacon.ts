/** Sending a body that survives the page unloading (the signup form usually navigates away). */

/**
 * POSTs body with navigator.sendBeacon, or fetch with keepalive when the beacon is refused or missing; never throws. A
 * string body goes as `text/plain;charset=UTF-8` either way.
 */
export const sendBeacon = (url: string, body: string): void => {
  try {
    // A browser with the beacon turned off (Firefox's beacon.enabled) has no sendBeacon: its TypeError sends by fetch.
    if (navigator.sendBeacon(url, body)) return;
  } catch {}
  try {
    fetch(url, { method: 'POST', body, keepalive: true }).catch(() => {});
  } catch {
    // Neither can send from here: the snapshot is lost, the page is not.
  }
};
