import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { TOOL_CAPABILITIES, TOOL_CONFIG } from '../domain/mcpSchema.js';
import { TOOL_NAME, callTool, type ToolRunner } from '../domain/mcpTool.js';

/**
 * One JSON Schema validator for every server. The SDK builds a fresh Ajv instance per server unless
 * given one, which was the largest single cost of a stateless request; it only validates
 * elicitation answers, which the `loom` tool never asks for, and it caches compiled schemas.
 */
const sharedValidator = new AjvJsonSchemaValidator();

/**
 * An MCP server with the one `loom` tool (spec §4.8, behaviour.md §10.1), server info
 * `{name: "loom", version}`, for POST /mcp, which builds one per request (stateless). The runner
 * decides where commands execute. (`loom mcp` builds its one server in src/cli/mcp.ts from the same
 * domain contract: the CLI may not import this layer.)
 */
export function createToolServer(run: ToolRunner, version: string): McpServer {
  const server = new McpServer({ name: TOOL_NAME, version }, { jsonSchemaValidator: sharedValidator });
  server.registerTool(TOOL_NAME, TOOL_CONFIG, async (args) => callTool(args, run));
  server.server.registerCapabilities(TOOL_CAPABILITIES);
  return server;
}

/**
 * Answer one stateless Streamable HTTP request (behaviour.md §10.1): a fresh tool server and
 * transport, JSON responses, no session id; `parsed` is the already-read JSON-RPC payload.
 */
export async function serveStateless(req: IncomingMessage, res: ServerResponse, parsed: unknown, run: ToolRunner, version: string): Promise<void> {
  const server = createToolServer(run, version);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  // Registered before handleRequest: a client that leaves early still frees server and transport.
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsed);
}
