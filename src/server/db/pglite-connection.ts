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
 * The events emitted are those of node-postgres's Connection (a message's name; `errorMessage` for an ErrorResponse).
 */
import { EventEmitter } from 'node:events';
import { parse, serialize } from 'pg-protocol';
import type pg from 'pg';

/** Where protocol messages are run: one or several whole messages in, the backend's answer bytes out. */
export interface ProtocolEndpoint {
  exec(messages: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
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
      .then(() => this.#endpoint.exec(messages))
      .then((raw) => {
        let answer = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
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
