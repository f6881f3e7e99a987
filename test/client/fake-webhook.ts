/**
 * A local stand-in for the webhook bridge: a real node:http server on 127.0.0.1 that verifies each request's
 * signature with the service's own verifySignature and answers from a script of faults.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSignatureHeader } from '../../src/protocol/webhook';
import { verifySignature, type VerifySignatureResult } from '../../src/server/webhook/signature';

export type Reply =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | 'ok'
  /** Never answer: the client's timeout must end the attempt. */
  | 'hang'
  /** Destroy the socket without an answer: a connection reset. */
  | 'reset';

export interface ReceivedRequest {
  method: string;
  /** The raw request target, as on the wire (percent-encoded, with any query). */
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  json: Record<string, unknown>;
  verification: VerifySignatureResult;
  /** The `t=` of the signature header. */
  timestamp: number | null;
}

export interface FakeWebhook {
  baseUrl: string;
  requests: ReceivedRequest[];
  /** Replies for the next requests, in order; after them every request gets 'ok'. */
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** Starts the fake on a free loopback port, accepting signatures made with `secret`. */
export async function startFakeWebhook(secret: string): Promise<FakeWebhook> {
  const requests: ReceivedRequest[] = [];
  const queue: Reply[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const header = req.headers['x-service-signature'];
      const verification = verifySignature({ rawBody, header, secrets: [secret], path: req.url ?? '' });
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(rawBody.toString('utf8')) as Record<string, unknown>;
      } catch {
        // recorded as {}: the test asserts on it
      }
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawBody,
        json,
        verification,
        timestamp: parseSignatureHeader(typeof header === 'string' ? header : undefined)?.timestamp ?? null,
      });
      if (!verification.ok) {
        return send(401, { error: { type: 'authentication_error', code: verification.code, message: verification.message } });
      }
      const reply = queue.shift() ?? 'ok';
      if (reply === 'hang') return;
      if (reply === 'reset') return req.socket.destroy();
      if (reply === 'ok') {
        return send(200, { status: 'promoted', promoted_count: 1, customer_event_id: json.customer_event_id, correlated: json.correlation_token != null });
      }
      send(reply.status, reply.body, reply.headers);
    });
    function send(status: number, body: unknown, headers: Record<string, string> = {}): void {
      const text = typeof body === 'string' ? body : JSON.stringify(body ?? {});
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(text);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    script: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A clock that only moves when the client sleeps: backoff is recorded, never waited for. */
export function fakeTime(startMs = Date.now()) {
  let now = startMs;
  const delays: number[] = [];
  return {
    delays,
    now: () => now,
    sleep: async (ms: number) => {
      delays.push(ms);
      now += ms;
    },
  };
}
