import type { Express, Request, Response } from 'express';
import { LoomError } from '../../domain/errors.js';
import { isAgentId } from '../../domain/ids.js';
import { parseTopic } from '../../domain/topic.js';
import { commandWord } from '../../domain/requestLog.js';
import { serveMcp } from '../../mcp/serve.js';
import { noteRequest } from '../requestLog.js';
import type { AppContext } from '../context.js';
import { readBody } from '../body.js';
import { agentHeader, route } from '../route.js';

/** behaviour.md §10.1: the body of GET and DELETE /mcp (405), as the SDK's stateless example answers. */
export const MCP_METHOD_NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null } as const;

/** The JSON-RPC parse error the SDK transport gives for a body that is not JSON. */
const PARSE_ERROR = { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null } as const;

/** The JSON-RPC payload of a POST, or undefined when it is not JSON (empty counts as not JSON, as in the SDK). */
function parseJson(buf: Buffer): unknown {
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The request-log fields of a `tools/call` of the `loom` tool: topic and command word (behaviour.md §2.13). */
function toolCallNote(parsed: unknown): { topic?: string; command?: string | null } {
  const msg = parsed as { method?: unknown; params?: { arguments?: { topic?: unknown; cmd?: unknown } } } | null;
  if (typeof msg !== 'object' || msg === null || msg.method !== 'tools/call') return {};
  const args = msg.params?.arguments;
  // Only a topic that parses is recorded: anything else is arbitrary caller text.
  const topic = parseTopic(args?.topic)?.topic;
  return { ...(topic !== undefined ? { topic } : {}), command: commandWord(args?.cmd) };
}

/**
 * POST /mcp (spec §4.8, behaviour.md §10.1): Streamable HTTP, stateless — a fresh tool server and
 * transport per request (mcp/serve.ts), JSON responses, no session ids. The body is read here with
 * the 10 MiB cap of behaviour.md §9.1 and handed to the transport as `parsedBody` (no app-wide JSON parser).
 */
async function handlePost(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const agentId = agentHeader(req) ?? 'default';
  if (!isAgentId(agentId)) throw new LoomError(400, `Invalid agent_id: ${agentId}`);
  const parsed = parseJson(await readBody(req));
  if (parsed === undefined) throw new LoomError(400, 'Parse error', { protocolBody: PARSE_ERROR });
  noteRequest(res, { agent: agentId, ...toolCallNote(parsed) });
  await serveMcp(ctx.system, agentId, parsed, req, res);
}

/** POST, GET, DELETE /mcp; other methods get the generic 405 of behaviour.md §9.1. */
export function mountMcp(app: Express, ctx: AppContext): void {
  const notAllowed = () => {
    throw new LoomError(405, 'Method not allowed', { headers: { Allow: 'POST' }, protocolBody: MCP_METHOD_NOT_ALLOWED });
  };
  route(app, '/mcp', {
    POST: (req, res) => handlePost(ctx, req, res),
    GET: notAllowed,
    DELETE: notAllowed,
  });
}
