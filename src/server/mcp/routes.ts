/**
 * POST /mcp: the agent tools over Streamable HTTP, stateless (a fresh MCP server per request). The Bearer key is checked
 * as on /v1 (401 with the envelope), and each tool runs its REST route in process with the caller's Authorization
 * header, so it sees exactly the account, validation and logic the REST API has. Any other method on /mcp is 405.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AppContext } from '../http/app';
import { bearerAuthHook } from '../http/auth';
import { ApiError } from '../http/errors';
import { parseJsonText, utf8JsonBodyText } from '../http/json-text';
import { createMcpServer } from './server';
import { queryString, type CallRest } from './tools';

/** The request headers the Streamable HTTP transport reads; nothing else is handed to it. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

/** A CallRest that runs the REST route on this app through `inject`, as the caller. */
function restOverInject(app: FastifyInstance, authorization: string): CallRest {
  return async (method, path, { query, body }) => {
    const response = await app.inject({
      method,
      url: `${path}${queryString(query)}`,
      headers: { authorization, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    try {
      return { status: response.statusCode, body: response.body === '' ? null : (response.json() as unknown) };
    } catch {
      return { status: response.statusCode, body: null };
    }
  };
}

/**
 * The Fastify request as the Web Request the SDK's transport takes (its body is passed parsed, beside it). The
 * transport reads no part of the URL but its path, so the origin is a fixed one: built from the request's Host header,
 * a Host that is no host name (`Host: a b`) made the URL invalid and the request a 500.
 */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(new URL(request.url, 'http://mcp.invalid'), { method: 'POST', headers });
}

function methodNotAllowed(reply: FastifyReply): FastifyReply {
  return reply
    .status(405)
    .header('allow', 'POST')
    .send(new ApiError(405, 'invalid_request_error', 'method_not_allowed', 'The MCP endpoint is stateless: send JSON-RPC messages with POST /mcp.').toBody());
}

/** A JSON-RPC message that could not be read: answered as JSON-RPC says (Parse error, id null), not with the REST envelope. */
class UnreadableMessage {
  constructor(readonly status: number, readonly message: string) {}
}

/**
 * The body of POST /mcp as JSON, read as every JSON body is (UTF-8, nested 32 levels at most, `__proto__` refused) but
 * for two things. A NUL character is kept: it is in a tool's argument, and the REST route the tool calls refuses it
 * naming that argument, as a tool error (over stdio too); a number beyond a double (`1e999`) is kept for the tool to
 * refuse the same way (runTool). And a body that cannot be read is answered with a JSON-RPC
 * error, which an MCP client can show, rather than the REST envelope.
 */
function readMessage(request: FastifyRequest, body: Buffer): unknown {
  try {
    const text = utf8JsonBodyText(body, request.headers['content-type']);
    if (text === '') return new UnreadableMessage(400, 'Parse error: the request body is empty: send one JSON-RPC message.');
    return parseJsonText(text, { what: 'The JSON-RPC message', protoKeys: 'refuse', unpairedSurrogates: 'keep', nulCharacters: 'keep', nonFiniteNumbers: 'keep' });
  } catch (error) {
    if (error instanceof ApiError) return new UnreadableMessage(error.status, `Parse error: ${error.message}`);
    throw error;
  }
}

export default async function mcpRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  await fastify.register(async (app) => {
    app.addHook('onRequest', bearerAuthHook(db));
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      try {
        done(null, readMessage(request, body as Buffer));
      } catch (error) {
        done(error as Error);
      }
    });

    // A message over the body limit is answered as the SDK's own Streamable HTTP transport answers one over its limit
    // (413, JSON-RPC -32000 naming the limit) rather than with the REST envelope's 'Request body too large.', which an
    // MCP client shows without saying how large a message may be. Any other error goes to the app's handler.
    app.setErrorHandler((error: FastifyError, _request, reply) => {
      if (error.statusCode !== 413) throw error;
      const limit = app.initialConfig.bodyLimit ?? 1_048_576;
      const message = `Payload Too Large: Request body must not exceed ${limit} bytes: send smaller arguments.`;
      return reply.status(413).send({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });
    });

    app.post('/mcp', async (request, reply) => {
      if (request.body instanceof UnreadableMessage) {
        const { status, message } = request.body;
        return reply.status(status).send({ jsonrpc: '2.0', id: null, error: { code: -32700, message } });
      }
      const server = createMcpServer(restOverInject(app, request.headers.authorization!), { publicUrl: async () => settings.publicUrl });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        const response = await transport.handleRequest(webRequestOf(request), { parsedBody: request.body });
        reply.status(response.status);
        response.headers.forEach((value, name) => void reply.header(name, value));
        return reply.send(await response.text());
      } finally {
        await server.close();
      }
    });
  });

  // Every other method the router knows (GET, HEAD, PUT, PATCH, DELETE, OPTIONS, TRACE, QUERY) is 405 with Allow: POST,
  // with or without a key (it says nothing of an account), answered on arrival: a body is neither read nor parsed. No
  // CORS preflight is served for /mcp, so OPTIONS is one of them.
  fastify.route({
    method: fastify.supportedMethods.filter((method) => method !== 'POST'),
    url: '/mcp',
    exposeHeadRoute: false,
    onRequest: async (_request, reply) => methodNotAllowed(reply),
    handler: async (_request, reply) => methodNotAllowed(reply),
  });
}
