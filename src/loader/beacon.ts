/** Sending a body that survives the page unloading (the signup form usually navigates away). */

/** Sends body with navigator.sendBeacon, or fetch with keepalive when the beacon is refused; never throws or rejects. */
export function sendBeacon(url: string, body: Blob): void {
  try {
    navigator.sendBeacon(url, body) || fetch(url, { method: 'POST', body, keepalive: true }).catch(() => {});
  } catch {
    // Neither can send from here: the snapshot is lost, the page is not.
  }
}
