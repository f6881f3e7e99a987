/** `cnv mcp`: the agent tools over stdio, talking to the running service's REST API (so the embedded store stays its own). */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from './server';
import { restOverFetch } from './rest-over-fetch';
import type { CallRest } from './tools';

export interface StdioOptions {
  /** The service's base URL, such as http://127.0.0.1:8787. */
  apiUrl: string;
  /** The API key every REST call carries. */
  apiKey: string;
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * Serves MCP on stdin/stdout until stdin ends (the client went away, or a script piped its requests and closed), then
 * answers what is still under way before closing: a request sent just before the end gets its answer. Nothing but
 * protocol is written to stdout.
 */
export async function serveStdio(options: StdioOptions): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  let inFlight = 0;
  let onIdle: (() => void) | null = null;
  const rest = restOverFetch(options.apiUrl, options.apiKey);
  const counted: CallRest = async (...args) => {
    inFlight++;
    try {
      return await rest(...args);
    } finally {
      inFlight--;
      if (inFlight === 0) onIdle?.();
    }
  };
  const server = createMcpServer(counted, { publicUrl: publicUrlOf(counted, options.apiUrl) });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const stdout = options.stdout ?? process.stdout;
  await server.connect(new StdioServerTransport(jsonLinesOnly(stdin, stdout), stdout));
  stdin.once('end', () => {
    void (async () => {
      // The last lines' requests start on the next turns; each answer is written a turn after its REST call ends.
      for (let quiet = 0; quiet < 3; ) {
        await new Promise((resolve) => setImmediate(resolve));
        if (inFlight > 0) await new Promise<void>((resolve) => (onIdle = resolve));
        quiet = inFlight === 0 ? quiet + 1 : 0;
      }
      await server.close();
    })();
  });
  await closed;
}

/**
 * The service's public base URL (CNV_PUBLIC_URL: the address of the install snippet), which may differ from the
 * address `cnv mcp` reaches it at: read once from the service's OpenAPI document (its REST API server), else the
 * address it is reached at.
 */
function publicUrlOf(callRest: CallRest, apiUrl: string): () => Promise<string> {
  let known: string | undefined;
  return async () => {
    if (known !== undefined) return known;
    const { status, body } = await callRest('GET', '/v1/openapi.json', {});
    const servers = status === 200 && typeof body === 'object' && body !== null ? (body as { servers?: unknown }).servers : undefined;
    const url = Array.isArray(servers) ? (servers[0] as { url?: unknown } | undefined)?.url : undefined;
    if (typeof url === 'string' && /^https?:\/\//.test(url)) return (known = url.replace(/\/+$/, ''));
    return apiUrl.replace(/\/+$/, '');
  };
}

/**
 * stdin with every line that is not JSON answered here, as JSON-RPC says (-32700 Parse error, id null), and left out:
 * the SDK's transport drops such a line without a word, and the client would wait for an answer.
 */
function jsonLinesOnly(stdin: Readable, stdout: Writable): Readable {
  const lines = new PassThrough();
  let pending = '';
  stdin.on('data', (chunk: Buffer | string) => {
    pending += chunk.toString();
    let end: number;
    while ((end = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line.trim() === '') continue;
      try {
        JSON.parse(line);
        lines.write(`${line}\n`);
      } catch {
        stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: each line must be one JSON-RPC message.' } })}\n`);
      }
    }
  });
  stdin.once('end', () => {
    if (pending.trim() !== '') lines.write(`${pending}\n`);
    lines.end();
  });
  return lines;
}
