import type { Feature } from '../features.js';
import { mountMcp } from '../http/routes/mcp.js';
import { TOOL_NAME } from '../domain/mcpTool.js';

/**
 * MCP (spec §4.8, behaviour.md §10): POST/GET/DELETE /mcp and the `mcp` entry of /describe
 * (behaviour.md §9.3).
 */
export const mcpFeature: Feature = (ctx) => {
  ctx.describeCapabilities.mcp = { tool: TOOL_NAME };
  return [mountMcp];
};
