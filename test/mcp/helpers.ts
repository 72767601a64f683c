import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** The `tools/call` result shape of spec §4.8. */
export interface ToolResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}

/** An SDK Client connected to `<base>/mcp` over Streamable HTTP, optionally as an agent. */
export async function httpClient(base: string, agentId?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'loom-test', version: '0.0.1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: agentId === undefined ? undefined : { headers: { 'X-Agent-Id': agentId } },
  });
  await client.connect(transport);
  return { client, transport };
}

/** Call the `loom` tool and return the result. */
export async function loom(client: Client, topic: string, cmd: string): Promise<ToolResult> {
  return (await client.callTool({ name: 'loom', arguments: { topic, cmd } })) as unknown as ToolResult;
}

/** The envelope of behaviour.md §10.2, written out independently of src/mcp. */
export function env(topic: string, body: string): string {
  return `<loom topic="${topic}">\n${body}\n</loom>`;
}

/** A JSON-RPC POST body. */
export function rpc(method: string, params?: unknown, id: number | null = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', ...(id === null ? {} : { id }), method, ...(params === undefined ? {} : { params }) });
}

/** Headers of a well-formed MCP POST (spec §4.8 recommended Accept). */
export const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
