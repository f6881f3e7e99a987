/** The public face of this folder: the agent tools (MCP) for the command line; POST /mcp is plugged in by app.ts. */
export { TOOLS, runTool, type CallRest, type RestResponse, type ToolDefinition } from './tools';
export { createMcpServer, MCP_SERVER_INFO } from './server';
export { restOverFetch } from './rest-over-fetch';
export { serveStdio, type StdioOptions } from './stdio';
