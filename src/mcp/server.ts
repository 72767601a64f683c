import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { TOOL_CAPABILITIES, TOOL_CONFIG } from '../domain/mcpSchema.js';
import { TOOL_NAME, callTool, type ToolRunner } from '../domain/mcpTool.js';

/**
 * One JSON Schema validator for every server. The SDK builds a fresh Ajv instance per server unless
 * given one, which would be the largest single cost of a stateless request; it only validates
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

/** The requests the `loom` server answers, with the SDK's schemas for them (public exports). */
const REQUEST_SCHEMAS: ReadonlyMap<string, ZodLike> = new Map<string, ZodLike>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

interface ZodLike {
  safeParse(v: unknown): { success: true } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}

/** Why a request's params do not fit its method's schema, or null (unknown methods are the SDK's to answer). */
export function invalidParams(message: JSONRPCMessage): string | null {
  if (!isJSONRPCRequest(message)) return null;
  const schema = REQUEST_SCHEMAS.get(message.method);
  if (!schema) return null;
  const r = schema.safeParse(message);
  if (r.success) return null;
  const what = r.error.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ');
  return `MCP error ${ErrorCode.InvalidParams}: Invalid params for ${message.method}: ${what}`;
}

/**
 * Params that do not fit a method's schema are the client's mistake: -32602 Invalid params. The SDK
 * would parse them inside its handler and answer -32603 Internal error with a zod dump, so each
 * message is checked as the transport hands it over (its public `onmessage`), before the server sees it.
 */
export function answerInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const why = invalidParams(message);
    if (why === null || !isJSONRPCRequest(message)) {
      deliver?.(message, extra);
      return;
    }
    void transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: why } }).catch(() => undefined);
  };
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
  answerInvalidParams(transport);
  await transport.handleRequest(req, res, parsed);
}
