/**
 * node-postgres's connection to the embedded PGlite, in place of PGlite's own adapter (`createPgConfig`), for two
 * reasons measured under the webhook load (docs/benchmarks.md):
 * - **One entry into PGlite per statement, not five.** node-postgres sends a statement as Parse, Bind, Describe,
 *   Execute and Sync; PGlite's adapter ran each message through PGlite on its own (a WASM main-loop entry, a file-system
 *   sync and a protocol parse each). Here the messages are held until the Sync (or Flush, or a simple Query) that ends
 *   them, and go in together: PGlite's main loop runs every message of the buffer in one call.
 * - **PGlite may live on another thread.** The connection speaks raw protocol bytes to an endpoint: PGlite in this
 *   thread, or PGlite on a worker thread (pglite-thread.ts), so the service's HTTP and its SQL use both cores. The
 *   answer's bytes are parsed here by node-postgres's own parser (pg-protocol), as from a socket.
 * - **A transaction's BEGIN goes in with its first statement.** node-postgres sends BEGIN alone and waits for its
 *   answer; each exchange is a round trip to PGlite's thread, which on a busy 2-core machine waits for a core (about
 *   2 ms a trip under the webhook load, more than a small statement takes to run). BEGIN is answered here at once, as
 *   PostgreSQL answers it, and sent ahead of the next messages; its own answer is then taken off theirs.
 * - **An answer without its statement's outcome is a failure of the store, not a success.** PGlite's main loop catches a
 *   JavaScript exception thrown inside PostgreSQL (a stack overflow, a failed memory growth, PostgreSQL's own abort()
 *   after a PANIC), drops it and answers ReadyForQuery as if the statement had ended: node-postgres would then resolve
 *   an INSERT that never ran, with no rows (reproduced with `jsonb` nested 300,000 deep). Each Parse, Bind, Execute and
 *   simple Query sent must have its answer (see answerLacksOutcome), or an ErrorResponse; when one is missing the
 *   exchange fails with the store-stopped code (503 store_unavailable), and so does every later one on this
 *   connection, as PostgreSQL's state is unknown from then on (db.ts opens the store again).
 * The events emitted are those of node-postgres's Connection (a message's name; `errorMessage` for an ErrorResponse).
 */
import { EventEmitter } from 'node:events';
import { parse, serialize } from 'pg-protocol';
import type pg from 'pg';
import { STORE_STOPPED_CODE } from './store-trouble';

/** Where protocol messages are run: one or several whole messages in, the backend's answer bytes out. */
export interface ProtocolEndpoint {
  exec(messages: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
  /**
   * Ends a PGlite whose state is unknown without asking it to close (on its worker: the thread is terminated, which
   * leaves the files as a kill -9 would, and the next open recovers from the write-ahead log). Absent in this thread,
   * where a PGlite cannot be ended without closing it.
   */
  abandon?(): Promise<void>;
}

type Serialized = Buffer | Uint8Array;

/** The text of the BEGIN that db.ts's transactions send. */
const BEGIN = 'begin';

/** PostgreSQL's answer to BEGIN outside a transaction: CommandComplete "BEGIN", then ReadyForQuery in a transaction. */
const BEGIN_ANSWER = Buffer.from([
  0x43, 0, 0, 0, 10, ...Buffer.from('BEGIN\0', 'latin1'),
  0x5a, 0, 0, 0, 5, 0x54,
]);

/**
 * Takes the answer of a BEGIN sent ahead of other messages off the front of `answer`: everything up to its
 * ReadyForQuery. `failed` says whether that answer held an ErrorResponse.
 */
export function withoutBeginAnswer(answer: Buffer): { rest: Buffer; failed: boolean } {
  let offset = 0;
  let failed = false;
  while (offset + 5 <= answer.length) {
    const type = answer[offset]!;
    const next = offset + 1 + answer.readInt32BE(offset + 1);
    if (type === 0x45) failed = true; // 'E'
    if (type === 0x5a) return { rest: answer.subarray(next), failed }; // 'Z'
    offset = next;
  }
  return { rest: Buffer.alloc(0), failed: true };
}

/** Frontend messages that each get their own answer: Parse, Bind, Execute and a simple Query. */
const PARSE = 0x50;
const BIND = 0x42;
const EXECUTE = 0x45;
const QUERY = 0x51;
/** Backend messages: ParseComplete, BindComplete, ErrorResponse; and those that end a statement. */
const PARSE_COMPLETE = 0x31;
const BIND_COMPLETE = 0x32;
const ERROR_RESPONSE = 0x45;
const OUTCOMES = new Set([0x43, 0x49, 0x73]); // CommandComplete, EmptyQueryResponse, PortalSuspended

/** Counts the protocol messages in `bytes` (whole messages, one after another) by type. */
function countByType(bytes: Uint8Array): Map<number, number> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const counts = new Map<number, number>();
  for (let offset = 0; offset + 5 <= bytes.length; offset += 1 + view.getInt32(offset + 1)) {
    counts.set(bytes[offset]!, (counts.get(bytes[offset]!) ?? 0) + 1);
  }
  return counts;
}

/**
 * Whether `answer` lacks what PostgreSQL owes the messages `sent`: a ParseComplete per Parse, a BindComplete per Bind,
 * an outcome per Execute and simple Query. An ErrorResponse excuses the rest (after an error PostgreSQL skips the
 * remaining messages of an extended exchange). Seen after a swallowed exception: ParseComplete, NoData,
 * EmptyQueryResponse and ReadyForQuery for a Parse, Bind, Describe, Execute and Sync: the Bind unanswered, the
 * statement's outcome an empty query.
 */
export function answerLacksOutcome(sent: Uint8Array, answer: Uint8Array): boolean {
  const asked = countByType(sent);
  const parses = asked.get(PARSE) ?? 0;
  const binds = asked.get(BIND) ?? 0;
  const statements = (asked.get(EXECUTE) ?? 0) + (asked.get(QUERY) ?? 0);
  if (parses + binds + statements === 0) return false;
  const answered = countByType(answer);
  if (answered.has(ERROR_RESPONSE)) return false;
  let outcomes = 0;
  for (const type of OUTCOMES) outcomes += answered.get(type) ?? 0;
  return (answered.get(PARSE_COMPLETE) ?? 0) < parses || (answered.get(BIND_COMPLETE) ?? 0) < binds || outcomes < statements;
}

/** The error of a store whose engine failed in the middle of a statement (see the module's comment). */
function storeEngineFailed(): Error {
  return Object.assign(
    new Error('the embedded database failed in the middle of a statement (its answer is incomplete): its state is unknown'),
    { code: STORE_STOPPED_CODE },
  );
}

/** A pg Connection look-alike over a ProtocolEndpoint. Only what node-postgres's Client and Query call is here. */
export class PgliteConnection extends EventEmitter {
  readonly #endpoint: ProtocolEndpoint;
  /** Messages of the statement being written, sent together at its Sync. */
  #outgoing: Serialized[] = [];
  /** Answers are fed here in order; pg-protocol's parser reads it as it would a socket. */
  readonly #incoming = new EventEmitter();
  /** One exchange at a time, in order. */
  #chain: Promise<unknown> = Promise.resolve();
  /** A BEGIN already answered here, to be sent ahead of the next messages (see query). */
  #heldBegin: Uint8Array | null = null;
  /** Set once an answer lacked a statement's outcome: every later exchange fails with it. */
  #broken: Error | null = null;
  _connecting = false;
  readonly stream = { destroy: () => this.end() };
  parsedStatements: Record<string, string> = {};
  submittedNamedStatements: Record<string, string> = {};

  constructor(endpoint: ProtocolEndpoint) {
    super();
    this.#endpoint = endpoint;
    void parse(this.#incoming as unknown as NodeJS.ReadableStream, (message) => {
      const name = (message as { name: string }).name;
      this.emit(name === 'error' ? 'errorMessage' : name, message);
    });
  }

  connect(): void {
    this._connecting = true;
    // The endpoint is ready (opened before the client): the session starts idle, as after a startup handshake.
    process.nextTick(() => this.emit('readyForQuery', { name: 'readyForQuery', status: 'I' }));
  }

  /** Holds a message of an extended-protocol exchange; `send` also sends everything held. */
  #write(message: Serialized, send: boolean): void {
    this.#outgoing.push(message);
    if (!send) return;
    const begun = this.#heldBegin !== null;
    if (begun) this.#outgoing.unshift(this.#heldBegin!);
    this.#heldBegin = null;
    const messages = this.#outgoing.length === 1 ? this.#outgoing[0]! : Buffer.concat(this.#outgoing);
    this.#outgoing = [];
    this.#chain = this.#chain
      .then(() => {
        if (this.#broken) throw this.#broken;
        return this.#endpoint.exec(messages);
      })
      .then((raw) => {
        let answer = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
        if (answerLacksOutcome(messages, answer)) throw (this.#broken = storeEngineFailed());
        if (begun) {
          const { rest, failed } = withoutBeginAnswer(answer);
          // Already answered as begun: a BEGIN that failed cannot be told to its caller any more, so the connection fails.
          if (failed) throw new Error('the embedded database refused BEGIN');
          answer = rest;
        }
        if (answer.byteLength > 0) this.#incoming.emit('data', answer);
      })
      .catch((error: unknown) => this.emit('error', error));
  }

  query(text: string): void {
    if (text === BEGIN && this.#heldBegin === null && this.#outgoing.length === 0) {
      this.#heldBegin = serialize.query(text);
      this.#chain = this.#chain.then(() => this.#incoming.emit('data', BEGIN_ANSWER));
      return;
    }
    this.#write(serialize.query(text), true);
  }
  parse(query: Parameters<typeof serialize.parse>[0]): void {
    this.#write(serialize.parse(query), false);
  }
  bind(config: Parameters<typeof serialize.bind>[0]): void {
    this.#write(serialize.bind(config), false);
  }
  execute(config: Parameters<typeof serialize.execute>[0]): void {
    this.#write(serialize.execute(config), false);
  }
  describe(message: Parameters<typeof serialize.describe>[0]): void {
    this.#write(serialize.describe(message), false);
  }
  close(message: Parameters<typeof serialize.close>[0]): void {
    this.#write(serialize.close(message), false);
  }
  flush(): void {
    this.#write(serialize.flush(), true);
  }
  sync(): void {
    this.#write(serialize.sync(), true);
  }
  sendCopyFromChunk(chunk: Buffer): void {
    this.#write(serialize.copyData(chunk), true);
  }
  endCopyFrom(): void {
    this.#write(serialize.copyDone(), true);
  }
  sendCopyFail(message: string): void {
    this.#write(serialize.copyFail(message), true);
  }

  end(): void {
    this.#heldBegin = null; // a transaction that never ran a statement: nothing to send
    this.#chain = this.#chain.then(() => {
      this.emit('end');
      this.#incoming.emit('end');
    });
  }

  // A socket's operations, without a socket.
  requestSsl(): void {}
  startup(): void {}
  cancel(): void {}
  password(): void {}
  ref(): void {}
  unref(): void {}
}

/** The node-postgres client config of one connection to PGlite through `endpoint`. */
export function pgliteClientConfig(endpoint: ProtocolEndpoint): pg.ClientConfig {
  return { connection: new PgliteConnection(endpoint), user: 'postgres', database: 'postgres' } as unknown as pg.ClientConfig;
}
