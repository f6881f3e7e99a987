/**
 * Reading identity fields (email, phone, first and last name) from a form, or from the name/value pairs a tool
 * reports. Only visible text-like inputs are read: never password, hidden or file inputs (nor checkboxes, selects or
 * textareas), whatever their names say.
 */
import { cleanValue } from '../loader/click-signals';
import type { DetectedFields } from './types';

/** What an input holds: one identity field, or a whole name to split into first and last. */
type Kind = keyof DetectedFields | 'full_name';

/** Input types a person types an identity into; `input.type` reports `text` for a missing or unknown type. */
const READ_TYPES = new Set(['text', 'email', 'tel']);

/** autocomplete tokens (WHATWG autofill field names) and what they hold. */
const AUTOCOMPLETE: Record<string, Kind> = {
  email: 'email',
  tel: 'phone',
  'tel-national': 'phone',
  'given-name': 'first_name',
  'family-name': 'last_name',
  name: 'full_name',
};

/**
 * What a field name says it holds. Accepts the names tools give: `email`, `your-email` (Contact Form 7),
 * `form_fields[email]` (Elementor), `0-1/firstname` (HubSpot), `name_first` (Gravity Forms' sub-field class).
 */
export function kindOfName(rawName: string): Kind | null {
  const name = rawName.toLowerCase();
  const inner = /\[([^\]]*)\]$/.exec(name)?.[1] ?? name.slice(name.lastIndexOf('/') + 1);
  const compact = inner.replace(/[^a-z0-9]/g, '');
  if (compact === '') return null;
  if ((/email/.test(compact) || /^(your)?mail(address)?$/.test(compact)) && !/confirm|verify|repeat/.test(compact)) return 'email';
  if (/(first|given|fore)name|namefirst|^fname$/.test(compact)) return 'first_name';
  if (/(last|family|sur)name|namelast|^lname$/.test(compact)) return 'last_name';
  if (/phone|mobile|^tel$|^telephone/.test(compact)) return 'phone';
  if (/^(your)?(full)?name$/.test(compact)) return 'full_name';
  return null;
}

/**
 * What an input holds, judged by its autocomplete token, then its type, then its name, id, class and its container's
 * class (Gravity Forms' `name_first`, WPForms' `wpforms-field-name-first`).
 */
function kindOfInput(input: HTMLInputElement): Kind | null {
  for (const token of (input.getAttribute('autocomplete') || '').toLowerCase().split(/\s+/)) {
    const kind = AUTOCOMPLETE[token];
    if (kind) return kind;
  }
  if (input.type === 'email') return 'email';
  if (input.type === 'tel') return 'phone';
  const parentClass = input.parentElement ? input.parentElement.className : '';
  for (const hint of [input.name, input.id, input.className, typeof parentClass === 'string' ? parentClass : '']) {
    for (const word of hint.split(/\s+/)) {
      const kind = word ? kindOfName(word) : null;
      if (kind) return kind;
    }
  }
  return null;
}

/** Builds fields from (kind, value) pairs: the first non-empty value of each kind wins; a full name fills the gaps. */
function collect(pairs: Iterable<[Kind | null, unknown]>): DetectedFields {
  const fields: DetectedFields = {};
  let fullName: string | undefined;
  for (const [kind, raw] of pairs) {
    if (!kind || typeof raw !== 'string') continue;
    const value = raw.trim();
    if (value === '') continue;
    if (kind === 'full_name') fullName ??= value;
    else fields[kind] ??= cleanValue(value);
  }
  if (fullName !== undefined) {
    // A single name field: the first word is the first name, the rest the last name ("Ada King Lovelace" →
    // "Ada" / "King Lovelace"), so particles such as "van" stay with the family name.
    // No array rest pattern here: Safari before 14.1 implements `[first, ...rest] =` wrongly (build.mjs).
    const words = fullName.split(/\s+/);
    const first = words.shift();
    if (!fields.first_name && first) fields.first_name = cleanValue(first);
    if (!fields.last_name && words.length > 0) fields.last_name = cleanValue(words.join(' '));
  }
  return fields;
}

/** The identity fields typed into the inputs under root (a form, or a tool's container). */
export function readFields(root: ParentNode): DetectedFields {
  const inputs = Array.from(root.querySelectorAll('input'));
  return collect(
    inputs
      .filter((input) => READ_TYPES.has(input.type) && !input.disabled)
      .map((input): [Kind | null, unknown] => [kindOfInput(input), input.value]),
  );
}

/** The identity fields among name/value pairs a tool reported, judged by name alone. */
export function fieldsFromPairs(pairs: Iterable<readonly [string, unknown]>): DetectedFields {
  const kinds: [Kind | null, unknown][] = [];
  for (const [name, value] of pairs) kinds.push([typeof name === 'string' ? kindOfName(name) : null, value]);
  return collect(kinds);
}

/** a, with b's values added (b wins where both have one): the pages of a multi-page form add up. */
export function mergeFields(a: DetectedFields | undefined, b: DetectedFields): DetectedFields {
  return { ...a, ...b };
}
