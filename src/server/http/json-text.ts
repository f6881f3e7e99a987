/** Parsing a JSON request body into values PostgreSQL can store, naming the first value it could not. */
import { isUtf8 } from 'node:buffer';
import { ApiError, invalidParam, printable } from './errors';

/**
 * The text of a request body's bytes, which must be UTF-8: any other byte sequence is a 400 `invalid_json`. Decoded
 * leniently, every invalid sequence became U+FFFD, so two different bodies could read as one text (two reports' distinct
 * `customer_event_id`s as one, the second then answered as a repeat of the first and never stored).
 */
export function utf8Text(bytes: Buffer, what = 'The request body', code = 'invalid_json'): string {
  if (!isUtf8(bytes)) throw new ApiError(400, 'invalid_request_error', code, `${what} is not valid UTF-8: send it encoded as UTF-8.`);
  return bytes.toString('utf8');
}

/** The charset a Content-Type declares, lowercased, or null when it declares none. */
function declaredCharset(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '');
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * The text of a JSON body whose Content-Type may declare only UTF-8 (`charset=utf-8`, or none: JSON exchanged between
 * systems is UTF-8, RFC 8259): another charset is a 415 that says so, bytes that are not UTF-8 a 400.
 */
export function utf8JsonBodyText(bytes: Buffer, contentType: string | undefined, what = 'The request body'): string {
  const charset = declaredCharset(contentType);
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError(
      415, 'invalid_request_error', 'unsupported_media_type',
      `The body is declared as charset '${printable(charset, 40)}': send JSON encoded as UTF-8 (Content-Type: application/json, or application/json; charset=utf-8).`,
    );
  }
  return utf8Text(bytes, what);
}

/** How a reader treats what JSON allows but the service cannot keep. */
export interface JsonTextOptions {
  /** What the text is, for messages: `The request body`, `The body`. */
  what?: string;
  /**
   * A `__proto__` key: `refuse` answers 400 `parameter_unknown` naming it (REST bodies, where every unknown key is
   * refused); `drop` removes it (lenient readers that ignore unknown fields: the snapshot, the webhook report).
   */
  protoKeys?: 'refuse' | 'drop';
  /**
   * A string holding an unpaired UTF-16 surrogate (`"\ud800"`, which PostgreSQL refuses in jsonb): `refuse` answers
   * 400 `parameter_invalid` naming it; `keep` leaves it for a lenient reader to repair or drop.
   */
  unpairedSurrogates?: 'refuse' | 'keep';
  /**
   * A string or key holding a NUL character (`"\u0000"`, which PostgreSQL text and jsonb cannot store): `refuse`
   * answers 400 `invalid_json` naming it (default); `keep` leaves it for the reader that stores it to refuse (the agent
   * tools' JSON-RPC, whose arguments reach a REST route that names the argument).
   */
  nulCharacters?: 'refuse' | 'keep';
  /**
   * A number beyond a double's range (`1e999`, read as Infinity): `refuse` answers 400 `parameter_invalid` naming it
   * (default); `keep` leaves it for the agent tools, which refuse it naming the argument (`nonFiniteNumberPath`), as
   * over stdio.
   */
  nonFiniteNumbers?: 'refuse' | 'keep';
}

/**
 * String.prototype.isWellFormed and toWellFormed (ES2024; Node 20's V8 has both): the project's `lib` stays ES2022,
 * which the loader is written against. Native, they cost about a third of the regular expression they replace.
 */
type Es2024String = string & { isWellFormed(): boolean; toWellFormed(): string };

/** Whether a string is well-formed UTF-16 (no unpaired surrogate), so it can be encoded as UTF-8 and stored. */
export function isWellFormedText(text: string): boolean {
  return (text as Es2024String).isWellFormed();
}

/** The text with every unpaired surrogate replaced by U+FFFD; well-formed text comes back as it is. */
export function wellFormedText(text: string): string {
  return (text as Es2024String).isWellFormed() ? text : (text as Es2024String).toWellFormed();
}

/**
 * Parses JSON text. A syntax error, or a string or key holding a NUL character (which PostgreSQL text and jsonb cannot
 * store), is a 400 `invalid_json` that says so and names where; a number beyond a double's range (`1e999`, which
 * JSON.parse reads as Infinity, stored as null) a 400 `parameter_invalid` naming it; `__proto__` keys and unpaired
 * surrogates as the options say.
 */
export function parseJsonText(text: string, options: JsonTextOptions = {}): unknown {
  const what = options.what ?? 'The request body';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', `${what} is not valid JSON.`);
  }
  const unpairedSurrogates = options.unpairedSurrogates ?? 'refuse';
  if (needsWalk(text, unpairedSurrogates)) {
    inspect(value, '', {
      what, protoKeys: options.protoKeys ?? 'drop', unpairedSurrogates, nulCharacters: options.nulCharacters ?? 'refuse',
      nonFiniteNumbers: options.nonFiniteNumbers ?? 'refuse',
    });
  }
  return value;
}

/**
 * Text that may hold a number beyond a double's range (about 1.8e308): an exponent of three digits or more, or 200
 * digits in a row. With an exponent of at most 99, a number needs 210 digits before its point to reach 1e308 (JSON
 * allows no leading zeros, and digits after the point add nothing); 309 digits in a row, as before, missed
 * `1` + 210 zeros + `e99`.
 */
const TOO_LARGE_NUMBER = /[eE]\+?\d{3}|\d{200}/;

/**
 * Whether a parsed text must be walked, or can be shown from the text alone to hold nothing the walk refuses or drops.
 * Without a `\u` escape every string and key stands in the text as it is: a NUL would be raw (JSON.parse has already
 * refused it: JSON allows control characters only escaped), an unpaired surrogate would be in the text itself (checked
 * over the whole text when they are refused), and a `__proto__` key would be spelled out. Nesting is no deeper than the
 * count of opening brackets. Skipping the walk for an ordinary body nearly halves the cost of reading it (the benchmark's
 * 700-byte snapshot: about 7.4 µs to 4.2 µs, JSON.parse 3.7 µs of it).
 */
function needsWalk(text: string, unpairedSurrogates: 'refuse' | 'keep'): boolean {
  if (text.includes('\\u') || text.includes('__proto__')) return true;
  // A number JSON.parse reads as Infinity has an exponent of three digits or 210 digits before its point (read in a
  // string too: the walk then only costs its time).
  if (TOO_LARGE_NUMBER.test(text)) return true;
  if (unpairedSurrogates === 'refuse' && !isWellFormedText(text)) return true;
  // Counted by indexOf hops (a body has a handful): a loop over every character cost as much as the walk it spares.
  let brackets = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++brackets > JSON_MAX_DEPTH) return true;
    }
  }
  return false;
}

/** A parameter path as the error envelope names it: `actions_config[0].config.id`. */
function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/**
 * A value met in the walk, with where it sits. Its path is spelled only for an error: spelling every value's path
 * (and making it printable) was a tenth of what a webhook report allocated.
 */
interface Place {
  value: unknown;
  parent: Place | null;
  key: string | number;
  depth: number;
}

function pathOf(place: Place, rootPath: string): string {
  return place.parent ? childPath(pathOf(place.parent, rootPath), place.key) : rootPath;
}

/** The path of a place, or of its key `key` (a key is checked before its value is visited). */
function spell(place: Place, rootPath: string, key?: string): string {
  return key === undefined ? pathOf(place, rootPath) : childPath(pathOf(place, rootPath), key);
}

/** A string, or the key `key` of `place`, checked for NUL characters and, as the options say, unpaired surrogates. */
function checkText(text: string, place: Place, key: string | undefined, rootPath: string, options: Required<JsonTextOptions>): void {
  if (options.nulCharacters === 'refuse' && text.includes('\u0000')) {
    const at = spell(place, rootPath, key);
    const param = printable(at || 'body');
    throw new ApiError(
      400, 'invalid_request_error', 'invalid_json',
      `${options.what} holds a NUL character (\\u0000) in ${param}, which cannot be stored.`, at ? param : undefined,
    );
  }
  if (options.unpairedSurrogates === 'refuse' && !isWellFormedText(text)) {
    const param = printable(spell(place, rootPath, key) || 'body');
    throw invalidParam(param, `${param} holds an unpaired UTF-16 surrogate (such as \\ud800), which is not text and cannot be stored.`);
  }
}

/** The refusal of a number beyond a double's range (JSON.parse's Infinity, which JSON.stringify writes as null). */
export function numberTooLarge(param: string): ApiError {
  return invalidParam(param, `${param} is a number too large to store (at most about 1.8e308).`);
}

/**
 * The path of the first number in a parsed value that is not finite (`actions_config[0].config.n`), or null. For a
 * reader that kept them (`nonFiniteNumbers: 'keep'`) and passes the value on as JSON, where it would become null.
 */
export function nonFiniteNumberPath(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : path;
  // Deeper than any body is read (stdio's arguments are parsed by the SDK, unbounded): the route refuses the depth.
  if (typeof value !== 'object' || value === null || depth > JSON_MAX_DEPTH) return null;
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
  for (const [key, item] of entries) {
    const found = nonFiniteNumberPath(item, childPath(path, key), depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** Deepest nesting of arrays and objects accepted: deeper values are no data a client means to send, and would overflow a stack. */
export const JSON_MAX_DEPTH = 32;

/** Walks a parsed value (iteratively: depth is bounded, not the stack), checking every string and key; `__proto__` keys refused or dropped. */
function inspect(root: unknown, rootPath: string, options: Required<JsonTextOptions>): void {
  const pending: Place[] = [{ value: root, parent: null, key: '', depth: 0 }];
  while (pending.length > 0) {
    const place = pending.pop()!;
    const { value, depth } = place;
    if (typeof value === 'string') {
      checkText(value, place, undefined, rootPath, options);
      continue;
    }
    if (options.nonFiniteNumbers === 'refuse' && typeof value === 'number' && !Number.isFinite(value)) {
      // JSON.parse reads 1e999 as Infinity, which would be stored as null.
      throw numberTooLarge(printable(spell(place, rootPath) || 'body'));
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= JSON_MAX_DEPTH) {
      throw new ApiError(400, 'invalid_request_error', 'invalid_json', `${options.what} is nested more than ${JSON_MAX_DEPTH} levels deep.`);
    }
    const children: Place[] = [];
    if (Array.isArray(value)) {
      value.forEach((item, i) => children.push({ value: item, parent: place, key: i, depth: depth + 1 }));
    } else {
      for (const key of Object.keys(value)) {
        checkText(key, place, key, rootPath, options);
        if (key === '__proto__') {
          if (options.protoKeys === 'refuse') {
            const at = printable(spell(place, rootPath, key));
            throw invalidParam(at, `Unknown parameter: ${at}. A __proto__ key is never accepted.`, 'parameter_unknown');
          }
          delete (value as Record<string, unknown>)[key];
          continue;
        }
        children.push({ value: (value as Record<string, unknown>)[key], parent: place, key, depth: depth + 1 });
      }
    }
    // Reversed onto the stack, so the first fault in document order is the one named.
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]!);
  }
}
