import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
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
  paramsErrorsAsInvalidParams(server);
  return server;
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The SDK parses each request with its method's schema inside the handler, so `tools/call` with
 * `arguments: "x"` came back as -32603 Internal error carrying a zod dump (found by the issue 12
 * fuzzer). Params that do not fit the schema are the client's mistake: -32602 Invalid params.
 */
function paramsErrorsAsInvalidParams(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, RequestHandler> })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (err) {
        const issues = (err as { issues?: Array<{ path?: unknown[]; message?: string }> }).issues;
        if (!Array.isArray(issues)) throw err;
        const what = issues.map((i) => `${(i.path ?? []).join('.')}: ${i.message ?? 'invalid'}`).join('; ');
        throw new McpError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${what}`);
      }
    });
  }
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
