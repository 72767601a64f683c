import type { Express } from 'express';
import { LoomError } from '../../domain/errors.js';
import { parseRequestId } from '../../domain/output.js';
import { parseTopic } from '../../domain/topic.js';
import type { AppContext } from '../context.js';
import { readJsonObject } from '../body.js';
import { agentHeader, route } from '../route.js';
import { streamCommand } from '../sse.js';
import { commandWord } from '../../domain/requestLog.js';
import { noteRequest } from '../requestLog.js';

/** POST /exec (spec §4.7; behaviour.md §9.4 check order): validate, submit to the topic, stream its events. */
export function mountExec(app: Express, ctx: AppContext): void {
  const { system } = ctx;
  route(app, '/exec', {
    POST: async (req, res) => {
      const agentId = agentHeader(req);
      if (agentId === undefined) throw new LoomError(400, 'X-Agent-Id header required');
      if (!system.hasAgent(agentId)) throw new LoomError(401, `Unknown agent: ${agentId}`);
      const body = await readJsonObject(req, 'Invalid JSON body — expected {"cmd": "/…", "topic": "…"}');
      // Only the header is trimmed (behaviour.md §2.1): a body keeps its trailing newline.
      const cmd = typeof body.cmd === 'string' ? body.cmd.trimStart() : '';
      if (cmd.trim() === '') throw new LoomError(400, 'Empty command — provide a non-empty "cmd"');
      if (!cmd.startsWith('/')) throw new LoomError(400, 'Command must start with /');
      if (body.topic === undefined || body.topic === null) throw new LoomError(400, 'topic required');
      const ref = parseTopic(body.topic);
      if (!ref) throw new LoomError(400, `Invalid topic: ${String(body.topic)}`);
      const requestId = parseRequestId(body.request_id);
      noteRequest(res, { topic: ref.topic, command: commandWord(cmd), request_id: requestId });
      await streamCommand(res, { submit: (listener) => system.submit({ agentId, ref, cmd, requestId, via: 'exec' }, listener) });
    },
  });
}
