import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoomSystem } from '../actors/system.js';
import type { ToolRunner } from '../domain/mcpTool.js';
import { systemRunner } from './runner.js';

let server: Promise<typeof import('./server.js')> | undefined;

/**
 * The MCP SDK (and zod, Ajv) load on the first POST /mcp, not at start: they are about a third of
 * the daemon's heap, which most daemons never need (docs/architecture.md, "Resident memory"). A
 * failed load is retried on the next request.
 */
function loadServer(): Promise<typeof import('./server.js')> {
  server ??= import('./server.js').catch((err: unknown) => {
    server = undefined;
    throw err;
  });
  return server;
}

/**
 * One POST /mcp of `agentId` with its parsed JSON-RPC body (spec §4.8, behaviour.md §10.1): a
 * fresh tool server and transport answer it. Unknown agents are auto-registered on first touch
 * with a derived home (spec §4.8), by a request that is served: before a tool call runs, or once
 * the transport answered below 400. One the transport refuses (406 without Accept, 415, a bad
 * protocol version) leaves nothing behind.
 */
export async function serveMcp(system: LoomSystem, agentId: string, parsed: unknown, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const register = () => system.ensureAgent(agentId);
  const run = systemRunner(system, agentId);
  const runner: ToolRunner = async (ref, cmd) => {
    await register();
    return run(ref, cmd);
  };
  const { serveStateless } = await loadServer();
  await serveStateless(req, res, parsed, runner, system.services.info.version);
  if (res.statusCode < 400) await register();
}
