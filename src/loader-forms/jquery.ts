/**
 * Listening to events that tools fire only through jQuery (Gravity Forms, WPForms, Elementor). jQuery's trigger()
 * runs handlers bound with jQuery and never dispatches a native DOM event for a custom name, so addEventListener
 * cannot see these: https://api.jquery.com/trigger/ . The page's own jQuery is used when it has one.
 */
import { guard } from '../loader/guard';

interface JQueryLike {
  (target: EventTarget): { on(events: string, handler: Function): unknown; off(events: string, handler: Function): unknown };
}

/**
 * Binds handler to events on target through the page's jQuery, now or, when jQuery is not there yet, at the
 * window's load. handler gets the element the event was triggered on (the jQuery event's target, as a handler bound on
 * document runs for events triggered on any element inside) and the extra trigger arguments.
 */
export function onJQueryEvent(
  win: Window,
  target: EventTarget,
  events: string,
  handler: (element: unknown, args: unknown[]) => void,
): () => void {
  let bound: JQueryLike | undefined;
  let stopped = false;
  const listener = guard((event: unknown, ...args: unknown[]) => {
    handler(event !== null && typeof event === 'object' ? (event as { target?: unknown }).target : undefined, args);
  });
  const bind = guard(() => {
    const $ = (win as unknown as { jQuery?: unknown }).jQuery;
    if (stopped || bound || typeof $ !== 'function') return;
    (bound = $ as JQueryLike)(target).on(events, listener);
  });
  bind();
  if (!bound) win.addEventListener('load', bind, { once: true });
  return guard(() => {
    stopped = true;
    win.removeEventListener('load', bind);
    if (bound) bound(target).off(events, listener);
  });
}
