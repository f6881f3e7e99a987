/** `cnv mcp`: the agent tools over stdio, talking to the running service's REST API (so the embedded store stays its own). */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from './server';
import { restOverFetch } from './rest-over-fetch';

export interface StdioOptions {
  /** The service's base URL, such as http://127.0.0.1:8787. */
  apiUrl: string;
  /** The API key every REST call carries. */
  apiKey: string;
  stdin?: Readable;
  stdout?: Writable;
}

/** Serves MCP on stdin/stdout until stdin ends (the client went away). Nothing but protocol is written to stdout. */
export async function serveStdio(options: StdioOptions): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const server = createMcpServer(restOverFetch(options.apiUrl, options.apiKey));
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport(stdin, options.stdout ?? process.stdout));
  stdin.once('end', () => void server.close());
  await closed;
}
