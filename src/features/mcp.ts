import { TOOL_NAME } from '../domain/mcpTool.js';
import { mountMcp } from '../http/routes/mcp.js';
import type { Feature } from './types.js';

/**
 * MCP (spec §4.8, behaviour.md §10): POST/GET/DELETE /mcp and the `mcp` entry of /describe
 * (behaviour.md §9.3).
 */
export const mcpFeature: Feature = () => ({
  describe: { mcp: { tool: TOOL_NAME } },
  routes: [mountMcp],
});
