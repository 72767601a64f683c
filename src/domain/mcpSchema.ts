import { z } from 'zod';
import { CMD_DESCRIPTION, TOOL_DESCRIPTION, TOOL_TITLE, TOPIC_DESCRIPTION } from './mcpTool.js';

/*
 * The zod side of the `loom` tool, apart from mcpTool.ts so that the daemon loads zod and the MCP
 * SDK only when the first POST /mcp arrives (src/mcp/serve.ts; docs/architecture.md,
 * "Resident memory").
 */

/** Input schema of the `loom` tool (behaviour.md §10.1): both strings, minLength 1, required. */
export const toolInputSchema = {
  topic: z.string().min(1).describe(TOPIC_DESCRIPTION),
  cmd: z.string().min(1).describe(CMD_DESCRIPTION),
};

/** The tool's registration: title, description and input schema (what `tools/list` shows). */
export const TOOL_CONFIG = { title: TOOL_TITLE, description: TOOL_DESCRIPTION, inputSchema: toolInputSchema };

/**
 * Server capabilities after the tool is registered: the SDK's McpServer advertises
 * `tools.listChanged: true` as soon as a tool exists, but the `loom` tool list never changes, so a
 * host would wait for notifications that never come. Registered over the SDK's value (it merges).
 */
export const TOOL_CAPABILITIES = { tools: { listChanged: false } } as const;
