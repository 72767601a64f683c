import type { Express, Request } from 'express';
import { LoomError } from '../../domain/errors.js';
import { idRequired, parseWireTopic, sessionPathError, unknownIdentity, type WireDescription } from '../../domain/wire.js';
import type { AppContext } from '../context.js';
import { readJsonObject } from '../body.js';
import { route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

/** Decode a percent-encoded path part; malformed encoding leaves it as is. */
function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The raw path after `/sessions/` (behaviour.md §9.9: split at the first `/`, both parts decoded). */
function sessionPath(req: Request, wire: WireDescription): { agentId: string; topic: string } {
  const raw = req.originalUrl.split('?')[0].slice('/sessions/'.length);
  const i = raw.indexOf('/');
  if (i < 0) throw new LoomError(400, sessionPathError(wire));
  return { agentId: decode(raw.slice(0, i)), topic: decode(raw.slice(i + 1)) };
}

/**
 * GET/POST /sessions, DELETE /sessions/{agent_id}/{topic} (spec §4.6; behaviour.md §9.9), with the
 * wire's identity field and topic grammar (`user_id`, `type:name` on the user wire, §11).
 */
export function mountSessions(app: Express, ctx: AppContext): void {
  const { system, wire } = ctx;
  const id = wire.idField;
  route(app, '/sessions', {
    GET: (req, res) => {
      const q = req.query[id];
      const filter = typeof q === 'string' ? q : undefined;
      const ids = filter !== undefined ? [filter] : system.agentIds();
      const sessions = ids.flatMap((agentId) => system.sessionRows(agentId).map((row) => ({ [id]: agentId, ...row })));
      sendJson(req, res, 200, { sessions });
    },
    POST: async (req, res) => {
      const body = await readJsonObject(req);
      const agentId = body[id];
      if (agentId === undefined || agentId === null || agentId === '') throw new LoomError(400, idRequired(wire));
      if (typeof agentId !== 'string' || !system.hasAgent(agentId)) throw new LoomError(401, unknownIdentity(wire, String(agentId)));
      if (body.topic === undefined || body.topic === null) throw new LoomError(400, 'topic required');
      const ref = parseWireTopic(wire, body.topic);
      if (!ref) throw new LoomError(400, `Invalid topic: ${String(body.topic)}`);
      const { created } = system.openTopic(agentId, ref);
      sendJson(req, res, 200, { [id]: agentId, topic: ref.topic, topic_type: ref.type, created });
    },
  });
  app.all('/sessions/{*rest}', async (req, res) => {
    if (req.method !== 'DELETE') throw new LoomError(405, `Method not allowed: ${req.method} ${req.path}`, { headers: { Allow: 'DELETE' } });
    const { agentId, topic } = sessionPath(req, wire);
    const ref = parseWireTopic(wire, topic);
    if (!ref) throw new LoomError(400, `Invalid topic: ${topic}`);
    sendJson(req, res, 200, { [id]: agentId, topic: ref.topic, deleted: system.closeSession(agentId, ref.topic) });
  });
}
