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

/** A pg Connection look-alike over a ProtocolEndpoint. Only what node-postgres's Client and Query call is here. */
export class PgliteConnection extends EventEmitter {
  readonly #endpoint: ProtocolEndpoint;
  /** Messages of the statement being written, sent together at its Sync. */
  #outgoing: Serialized[] = [];
  /** Answers are fed here in order; pg-protocol's parser reads it as it would a socket. */
  readonly #incoming = new EventEmitter();
  /** One exchange at a time, in order. */
  #chain: Promise<unknown> = Promise.resolve();
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
    const messages = this.#outgoing.length === 1 ? this.#outgoing[0]! : Buffer.concat(this.#outgoing);
    this.#outgoing = [];
    this.#chain = this.#chain
      .then(() => this.#endpoint.exec(messages))
      .then((answer) => {
        if (answer.byteLength > 0) this.#incoming.emit('data', Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength));
      })
      .catch((error: unknown) => this.emit('error', error));
  }

  query(text: string): void {
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
