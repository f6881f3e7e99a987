/**
 * Remembers each form's identity fields at its submit and settles each submit once. Tools replace (Gravity Forms,
 * WPForms) or reset (Elementor, Contact Form 7) the form before they signal success, so the fields are read at the
 * submit; and a tool may signal one success twice (a jQuery event and the confirmation it renders), so a submit
 * settles once: the second signal finds it settled.
 */
import { mergeFields, readFields } from './fields';
import { guard } from '../loader/guard';
import type { DetectedFields } from './types';

export interface SubmitLedger {
  /**
   * The fields remembered for key's last submit, once: null when that submit already settled, or when no submit was
   * seen and requireSubmit is true (a signal that can also appear without a submit, such as a success block shown).
   * A key with no submit seen settles once with no fields (a confirmation rendered by a full page reload).
   */
  settle(key: string, requireSubmit: boolean): DetectedFields | null;
  stop(): void;
}

/** Starts a ledger over the forms that keyOf names (null: not a form of this tool), listening in the capture phase. */
export function submitLedger(doc: Document, keyOf: (form: HTMLFormElement) => string | null): SubmitLedger {
  const open = new Map<string, DetectedFields>();
  const settled = new Set<string>();
  const onSubmit = guard((event: Event) => {
    const form = event.target as HTMLFormElement | null;
    if (!form || form.tagName !== 'FORM') return;
    const key = keyOf(form);
    if (key === null) return;
    // A multi-page form submits once per page: the pages add up until the success.
    open.set(key, mergeFields(open.get(key), readFields(form)));
    settled.delete(key);
  });
  doc.addEventListener('submit', onSubmit, true);
  return {
    settle(key, requireSubmit) {
      if (settled.has(key)) return null;
      const fields = open.get(key);
      if (!fields && requireSubmit) return null;
      open.delete(key);
      settled.add(key);
      return fields ?? {};
    },
    stop: () => doc.removeEventListener('submit', onSubmit, true),
  };
}

const elementKeys = new WeakMap<object, string>();
let nextElementKey = 0;

/** A ledger key for an element that has no id of its own (two copies of one form on a page stay apart). */
export function keyOfElement(element: object): string {
  let key = elementKeys.get(element);
  if (!key) elementKeys.set(element, (key = `element-${++nextElementKey}`));
  return key;
}
