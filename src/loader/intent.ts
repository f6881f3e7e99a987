/**
 * Signup intent, what the loader acts on: a submit of a form marked data-service-signup-intent, or a click on one of
 * its buttons.
 */
import type { SIGNUP_INTENT_ATTRIBUTE } from '../protocol/install';
import { guard } from './guard';

/**
 * The innermost element of an event's composed path that matches `selector`: composedPath() reaches into open shadow
 * roots, so a button inside a web component is found where event.target (retargeted to the host) is not.
 */
export const pathElement = <E extends Element>(event: Event, selector: string): E | undefined => {
  return event.composedPath().find((node) => (node as Element).matches && (node as Element).matches(selector)) as E | undefined;
};

/**
 * Calls onIntent once per user action on a form carrying data-service-signup-intent, including forms added later and
 * forms inside open shadow roots: one capture-phase submit listener and one capture-phase click listener on document.
 * The submit a click causes is dispatched in the same task as the click, so it is recognised as the same action and
 * not counted again.
 */
export const watchIntent = (onIntent: () => void): void => {
  let current: unknown;
  const handle = (form: HTMLFormElement | null | undefined) => {
    if (!form || form === current || !form.hasAttribute('data-service-signup-intent' satisfies typeof SIGNUP_INTENT_ATTRIBUTE)) return;
    current = form;
    setTimeout(() => (current = null));
    onIntent();
  };
  document.addEventListener('submit', guard((event: Event) => handle(event.target as HTMLFormElement)), true);
  document.addEventListener(
    'click',
    guard((event: Event) => {
      // A click on one of the form's buttons counts: a script's form.submit() after it fires no submit event of its own.
      const button = pathElement<HTMLButtonElement>(event, 'button,[type=submit],[type=image]');
      handle(button && button.form);
    }),
    true,
  );
};
