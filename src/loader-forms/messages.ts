/** Listening to window messages from a tool's iframe, from the origins it posts from and no other. */
import { guard } from '../loader/guard';

/** Calls handler with each message's data whose origin is one of origins. Returns stop. */
export function onMessageFrom(
  win: Window,
  origins: readonly string[],
  handler: (data: unknown, event: MessageEvent) => void,
): () => void {
  const listener = guard((event: MessageEvent) => {
    // Any page can post to this window: only the tool's own origin may report a submission.
    if (!origins.includes(event.origin)) return;
    handler(event.data, event);
  });
  win.addEventListener('message', listener);
  return () => win.removeEventListener('message', listener);
}

/** A plain object's property, or undefined (message data is whatever the sender posted). */
export function prop(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}
