/**
 * The harness every local fake of an ad platform (or OAuth server) is built on: a real HTTP server on 127.0.0.1 that
 * records each request, lets a test plan the next answers, and leaves what a request means to the platform's handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake saw of one request. */
export interface FakeRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  /** Headers with lower-case names (repeated headers joined by ", "). */
  headers: Record<string, string>;
  /** The raw body text. */
  text: string;
  /** The body parsed as JSON, or as a form when form-encoded; null when neither. */
  body: any;
  /** Everything the real platform would reject about the request; empty for a well-formed one. */
  problems: string[];
  /** HTTP status the fake answered (null while hanging). */
  answeredStatus: number | null;
  /** The answer's body, when it was JSON. */
  answer: unknown;
  receivedAt: Date;
}

/** An answer of a handler: a status, a JSON body (or text), headers; or `hang` to never answer. */
export type FakeAnswer = { status: number; json?: unknown; text?: string; headers?: Record<string, string>; redirect?: string } | 'hang';

/** The platform's handler: reads the request (and the next planned answer, if a test planned one) and answers. */
export type FakeHandler<Plan> = (request: FakeRequest, plan: Plan | undefined) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeServer<Plan> {
  /** Base URL, e.g. `http://127.0.0.1:54321`. */
  url: string;
  /** Every request received, oldest first. */
  requests: FakeRequest[];
  /** Queues planned answers for the next requests the handler consumes plans for, one each, in order. */
  respondWith(...plans: Plan[]): void;
  /** Forgets requests and planned answers. */
  reset(): void;
  /**
   * Holds every answer (those being made now and later ones) until the returned function is called: a request is
   * received and recorded, its answer waits. For tests of what a client does with a request in flight.
   */
  holdAnswers(): () => void;
  /** Resolves once `count` requests (matching `filter`, if given) have been received. */
  waitForRequests(count: number, options?: { timeoutMs?: number; filter?: (r: FakeRequest) => boolean }): Promise<FakeRequest[]>;
  close(): Promise<void>;
}

/**
 * Answers held back by a test (`holdAnswers`): `hold()` holds every answer from now until the function it returns is
 * called; `released()` resolves once no hold is on.
 */
export function answerHold(): { hold(): () => void; released(): Promise<void> } {
  let held: Promise<void> | null = null;
  return {
    hold() {
      let release!: () => void;
      const hold: Promise<void> = new Promise<void>((resolve) => (release = resolve)).then(() => {
        if (held === hold) held = null;
      });
      held = hold;
      return release;
    },
    async released() {
      while (held) await held;
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseBody(text: string, contentType: string): any {
  if (contentType.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function answer(res: ServerResponse, record: FakeRequest, result: Exclude<FakeAnswer, 'hang'>): void {
  record.answeredStatus = result.status;
  if (result.redirect) {
    res.writeHead(result.status, { location: result.redirect, ...result.headers });
    res.end();
    return;
  }
  if (result.json !== undefined) {
    record.answer = result.json;
    res.writeHead(result.status, { 'content-type': 'application/json; charset=utf-8', ...result.headers });
    res.end(JSON.stringify(result.json));
    return;
  }
  res.writeHead(result.status, { 'content-type': 'text/plain; charset=utf-8', ...result.headers });
  res.end(result.text ?? '');
}

/** Starts a fake on 127.0.0.1 (an ephemeral port unless one is given). `name` appears in its error messages. */
export async function startFakeServer<Plan>(
  name: string,
  handler: FakeHandler<Plan>,
  options: { port?: number; /** Whether a request takes the next planned answer (default: every request takes it). */ takesPlan?: (request: FakeRequest, plan: Plan) => boolean } = {},
): Promise<FakeServer<Plan>> {
  const requests: FakeRequest[] = [];
  const plans: Plan[] = [];
  const waiters = new Set<() => void>();
  const answers = answerHold();

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const text = await readBody(req);
    const record: FakeRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers,
      text,
      body: parseBody(text, headers['content-type'] ?? ''),
      problems: [],
      answeredStatus: null,
      answer: undefined,
      receivedAt: new Date(),
    };
    requests.push(record);
    for (const wake of [...waiters]) wake();
    let result: FakeAnswer;
    try {
      // A request takes the next planned answer, if any (only those `takesPlan` picks); the handler decides what it means.
      const next = plans[0];
      const takes = next !== undefined && (options.takesPlan ? options.takesPlan(record, next) : true);
      result = await handler(record, takes ? plans.shift() : undefined);
    } catch (error) {
      record.problems.push(`the fake itself failed: ${(error as Error).message}`);
      result = { status: 500, json: { error: `fake ${name} failed` } };
    }
    if (result === 'hang') return; // the socket stays open until the client gives up or the fake closes
    await answers.released();
    answer(res, record, result);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respondWith(...next) {
      plans.push(...next);
    },
    reset() {
      requests.length = 0;
      plans.length = 0;
    },
    holdAnswers: answers.hold,
    waitForRequests(count, { timeoutMs = 10_000, filter } = {}) {
      const matching = () => (filter ? requests.filter(filter) : requests.slice());
      if (matching().length >= count) return Promise.resolve(matching());
      return new Promise((resolve, reject) => {
        const wake = () => {
          if (matching().length < count) return;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve(matching());
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`fake ${name}: ${matching().length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(wake);
      });
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
