import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { LoomSystem } from '../../actors/system.js';
import { LoomError } from '../../domain/errors.js';
import { parseRequestId } from '../../domain/output.js';
import { commandWord } from '../../domain/requestLog.js';
import { headerRequired, parseWireTopic, unknownIdentity, wireHead, type WireDescription } from '../../domain/wire.js';
import type { AppContext, FastRoute } from '../context.js';
import { readJsonObject } from '../body.js';
import { noteRequest } from '../requestLog.js';
import { identityHeader, route } from '../route.js';
import { streamCommand } from '../sse.js';

/**
 * POST /exec (spec §4.7; behaviour.md §9.4 check order): validate, submit to the topic, stream its
 * events — with the wire's identity header, topic grammar and head field (behaviour.md §11).
 * Throws LoomError for the error renderer.
 */
export async function handleExec(system: LoomSystem, wire: WireDescription, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const agentId = identityHeader(req, wire);
  if (agentId === undefined) throw new LoomError(400, headerRequired(wire));
  if (!system.hasAgent(agentId)) throw new LoomError(401, unknownIdentity(wire, agentId));
  const body = await readJsonObject(req, 'Invalid JSON body — expected {"cmd": "/…", "topic": "…"}');
  // Only the header is trimmed (behaviour.md §2.1): a body keeps its trailing newline.
  const cmd = typeof body.cmd === 'string' ? body.cmd.trimStart() : '';
  if (cmd.trim() === '') throw new LoomError(400, 'Empty command — provide a non-empty "cmd"');
  if (!cmd.startsWith('/')) throw new LoomError(400, 'Command must start with /');
  if (body.topic === undefined || body.topic === null) throw new LoomError(400, 'topic required');
  const ref = parseWireTopic(wire, body.topic);
  if (!ref) throw new LoomError(400, `Invalid topic: ${String(body.topic)}`);
  const requestId = parseRequestId(body.request_id);
  noteRequest(res, { topic: ref.topic, command: commandWord(cmd), request_id: requestId });
  await streamCommand(res, { submit: (listener) => system.submit({ agentId, ref, cmd, requestId, via: 'exec' }, listener) }, (head) => wireHead(wire, head));
}

/** Other methods on /exec, and POST /exec spelled in ways only Express matches (`/EXEC`, `/exec/`). */
export function mountExec(app: Express, ctx: AppContext): void {
  route(app, '/exec', { POST: (req, res) => handleExec(ctx.system, ctx.wire, req, res) });
}

/**
 * POST /exec before Express (the daemon's hot path, bench/exec): the same handler. Only the exact
 * target `/exec` (query allowed) is taken; anything else goes to the app.
 */
export function execRoute(system: LoomSystem, wire: WireDescription): FastRoute {
  return {
    matches: (req) => req.method === 'POST' && (req.url === '/exec' || (req.url ?? '').startsWith('/exec?')),
    handle: (req, res) => handleExec(system, wire, req, res),
  };
}
