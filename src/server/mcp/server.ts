/**
 * The MCP server of the agent tools, over any transport: lists the tool table and runs a call through the REST executor
 * it is given. The SDK's low-level Server is used because the input schemas are JSON Schema (TypeBox), not zod.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListToolsRequestSchema, type CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { printable } from '../http/errors';
import { TOOLS, runTool, toolInputSchema, type CallRest, type ToolContext } from './tools';

/** The server's name and version as an MCP client sees them. */
export const MCP_SERVER_INFO = { name: 'cnv', title: 'cnv conversion tracking', version: '0.1.0' } as const;

/** What a model is told about the server as a whole, before it picks a tool. */
export const MCP_INSTRUCTIONS =
  'cnv tracks conversions (for example signups) and sends them to ad platforms. The usual path: list_sites to find the ' +
  'site; update_site to set its domain (create_site for a website on a domain no site covers, such as a landing-page ' +
  "domain: each site has its own snippet, webhook and flows, the account's destinations serve them all); " +
  'connect_destination for each ad platform and connect_trigger_source for the ' +
  "backend's signed webhook (each returns a url the user opens in their browser; check with get_handoff); the user " +
  "pastes the site's install snippet (list_sites and update_site give it) into every page of the website; create_flow " +
  'with the API trigger and one action per platform; publish_flow; then list_events and get_event to see conversions ' +
  'arrive. When a delivery failed: get_event says why; fix it (a live flow changes through unpublish_flow, update_flow ' +
  'and publish_flow; list_destinations shows a platform to connect again), then redeliver_event (one event) or ' +
  'redeliver_destination (every failed delivery of that platform). Secrets (the webhook ' +
  'secret, platform credentials) are only ever shown to the user in their browser.';

/** What a model's client can fix in a tools/call: the name of a tool and an object of its arguments. */
function describedValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * A tools/call's params checked for what the call must carry, with a message that says what to change, answered
 * -32602 Invalid params. It runs as the SDK's Protocol parses the request, before the SDK Server's own check of a
 * tools/call, which answered the same with its schema's dump behind a second "MCP error -32602: " (its McpError's
 * message carries one, and an SDK client adds its own).
 */
function checkedCallParams(params: unknown): unknown {
  const invalid = (message: string) => Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw invalid(`A tools/call needs params {name, arguments}; got ${describedValue(params)}.`);
  }
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') throw invalid(`A tools/call needs params.name, the tool's name as a string; got ${describedValue(name)}.`);
  if (args !== undefined && describedValue(args) !== 'an object') {
    throw invalid(`The arguments of tools/call '${printable(name)}' must be an object of the tool's parameters ({} when it takes none); got ${describedValue(args)}.`);
  }
  return params;
}

/**
 * A tools/call request, its params checked here (checkedCallParams). Given the SDK's full CallToolRequestSchema, its
 * Protocol parses the request with it before the Server's check of a tools/call can run, and a call whose `arguments`
 * is not an object (null, a list, a string) was answered -32603 Internal error with the schema's dump; the SDK
 * Server's check still runs after this one, and only a valid call reaches the handler.
 */
const ToolsCallRequest = z.object({ method: z.literal('tools/call'), params: z.unknown().transform(checkedCallParams) }).passthrough();

/** A new MCP server whose tools call the REST API through `callRest`; `context` tells them about the service. */
export function createMcpServer(callRest: CallRest, context: ToolContext = {}): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: toolInputSchema(tool),
      annotations: {
        title: tool.title,
        readOnlyHint: tool.readOnly,
        destructiveHint: tool.destructive === true,
        openWorldHint: tool.openWorld === true,
      },
    })),
  }));
  server.setRequestHandler(ToolsCallRequest, async (unchecked) => {
    // Checked against CallToolRequestSchema by the Server before this runs (see ToolsCallRequest).
    const { params } = unchecked as unknown as CallToolRequest;
    const tool = TOOLS.find((t) => t.name === params.name);
    if (!tool) {
      // Not McpError: its message carries "MCP error -32602: " already, which an SDK client then prefixes a second time.
      const message = `Unknown tool '${printable(params.name)}'; the tools are: ${TOOLS.map((t) => t.name).join(', ')}.`;
      throw Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
    }
    return runTool(tool, params.arguments ?? {}, callRest, context);
  });
  return server;
}
