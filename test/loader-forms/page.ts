/** The happy-dom page of a detector test: start detectors, act as the form tool would, read what was reported. */
import { startFormDetectors, type DetectedSubmission } from '../../src/loader-forms/index';

export interface Started {
  reports: DetectedSubmission[];
  stop(): void;
}

let running: (() => void) | undefined;

/** Starts the detectors of integrations on this page, recording every report. */
export function start(...integrations: string[]): Started {
  const reports: DetectedSubmission[] = [];
  const stop = startFormDetectors(integrations, (submission) => reports.push(submission), document, window);
  running = stop;
  return { reports, stop };
}

/** Stops the detectors, empties the page and removes the stand-ins a test installed. */
export function resetPage(): void {
  running?.();
  running = undefined;
  document.body.innerHTML = '';
  delete (window as unknown as Record<string, unknown>).jQuery;
  delete (window as unknown as Record<string, unknown>).HubSpotFormsV4;
}

/** Adds html to the body and returns its first element. */
export function render<T extends Element = HTMLElement>(html: string): T {
  const holder = document.createElement('div');
  holder.innerHTML = html;
  document.body.appendChild(holder);
  return holder.firstElementChild as T;
}

/** Submits form as a click on its submit button would (the tool's own handler is expected to prevent navigation). */
export function submit(form: HTMLFormElement): void {
  form.addEventListener('submit', (event) => event.preventDefault(), { once: true });
  form.requestSubmit();
}

/** Lets queued MutationObserver callbacks and promise reactions run (no timers involved). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/** Delivers a window message as if posted from origin (happy-dom's postMessage would stamp the page's origin). */
export function postFrom(origin: string, data: unknown, source: MessageEventSource | null = null): void {
  window.dispatchEvent(new MessageEvent('message', { data, origin, source }));
}

type Handler = (this: EventTarget, event: { type: string; target: EventTarget }, ...args: unknown[]) => void;

/**
 * A stand-in for the page's jQuery with what the tools use: on/off, and trigger, which (like jQuery's) calls the
 * handlers bound on the target and its ancestors up to document and window, and dispatches no native DOM event.
 */
export function installJQuery(): { trigger(target: EventTarget, type: string, args?: unknown[]): void } {
  const bound = new Map<EventTarget, { events: string; handler: Handler }[]>();
  const $ = (target: EventTarget) => ({
    on(events: string, handler: Handler) {
      bound.set(target, [...(bound.get(target) ?? []), { events, handler }]);
    },
    off(events: string, handler: Handler) {
      bound.set(target, (bound.get(target) ?? []).filter((b) => b.events !== events || b.handler !== handler));
    },
  });
  (window as unknown as Record<string, unknown>).jQuery = $;
  return {
    trigger(target, type, args = []) {
      const path: EventTarget[] = [];
      for (let node: Node | null = target as Node; node; node = node.parentNode) path.push(node);
      path.push(window);
      for (const current of path) {
        for (const { events, handler } of bound.get(current) ?? []) {
          if (events.split(' ').includes(type)) handler.call(current, { type, target }, ...args);
        }
      }
    },
  };
}
