import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { VERSION } from '../version.js';
import { CMD_DESCRIPTION, TOOL_DESCRIPTION, TOOL_NAME, TOOL_TITLE, TOPIC_DESCRIPTION, callTool, type ToolRunner } from './tool.js';

/** Input schema of the `loom` tool (behaviour.md §10.1): both strings, minLength 1, required. */
export const toolInputSchema = {
  topic: z.string().min(1).describe(TOPIC_DESCRIPTION),
  cmd: z.string().min(1).describe(CMD_DESCRIPTION),
};

/**
 * One JSON Schema validator for every server. The SDK builds a fresh Ajv instance per server unless
 * given one, which was the largest single cost of a stateless request; it only validates
 * elicitation answers, which the `loom` tool never asks for, and it caches compiled schemas.
 */
const sharedValidator = new AjvJsonSchemaValidator();

/** Options of one tool server. */
export interface ToolServerOptions {
  /** `capabilities.experimental` to advertise (the stdio `--channel` mode, behaviour.md §10.4). */
  experimental?: Record<string, Record<string, unknown>>;
}

/**
 * An MCP server with the one `loom` tool (spec §4.8, behaviour.md §10.1), server info
 * `{name: "loom", version}`. POST /mcp builds one per request (stateless); `loom mcp` builds one
 * per process. The runner decides where commands execute.
 */
export function createToolServer(run: ToolRunner, opts: ToolServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: TOOL_NAME, version: VERSION },
    { jsonSchemaValidator: sharedValidator, ...(opts.experimental ? { capabilities: { experimental: opts.experimental } } : {}) },
  );
  server.registerTool(
    TOOL_NAME,
    { title: TOOL_TITLE, description: TOOL_DESCRIPTION, inputSchema: toolInputSchema },
    async (args) => callTool(args, run),
  );
  return server;
}
