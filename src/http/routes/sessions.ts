import type { Express, Request } from 'express';
import { LoomError } from '../../domain/errors.js';
import { sessionMeta } from '../../domain/session.js';
import { parseTopic } from '../../domain/topic.js';
import type { AppContext } from '../context.js';
import { readJsonObject } from '../body.js';
import { route } from '../route.js';

/** Decode a percent-encoded path part; malformed encoding leaves it as is. */
function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The raw path after `/sessions/` (behaviour.md §9.9: split at the first `/`, both parts decoded). */
function sessionPath(req: Request): { agentId: string; topic: string } {
  const raw = req.originalUrl.split('?')[0].slice('/sessions/'.length);
  const i = raw.indexOf('/');
  if (i < 0) throw new LoomError(400, 'Expected /sessions/:agent_id/:topic');
  return { agentId: decode(raw.slice(0, i)), topic: decode(raw.slice(i + 1)) };
}

/** GET/POST /sessions, DELETE /sessions/{agent_id}/{topic} (spec §4.6; behaviour.md §9.9). */
export function mountSessions(app: Express, ctx: AppContext): void {
  const { system } = ctx;
  route(app, '/sessions', {
    GET: (req, res) => {
      const filter = typeof req.query.agent_id === 'string' ? req.query.agent_id : undefined;
      const ids = filter !== undefined ? [filter] : system.agentIds();
      const sessions = ids.flatMap((id) => system.topicStatuses(id).map((t) => ({
        agent_id: id, topic: t.session.ref.topic, topic_type: t.session.ref.type,
        executing: t.executing, queue_length: t.queueLength, doc: sessionMeta(t.session),
      })));
      res.json({ sessions });
    },
    POST: async (req, res) => {
      const body = await readJsonObject(req);
      const agentId = body.agent_id;
      if (agentId === undefined || agentId === null || agentId === '') throw new LoomError(400, 'agent_id required');
      if (typeof agentId !== 'string' || !system.hasAgent(agentId)) throw new LoomError(401, `Unknown agent: ${String(agentId)}`);
      if (body.topic === undefined || body.topic === null) throw new LoomError(400, 'topic required');
      const ref = parseTopic(body.topic);
      if (!ref) throw new LoomError(400, `Invalid topic: ${String(body.topic)}`);
      const { created } = system.openTopic(agentId, ref);
      res.json({ agent_id: agentId, topic: ref.topic, topic_type: ref.type, created });
    },
  });
  app.all('/sessions/{*rest}', async (req, res) => {
    if (req.method !== 'DELETE') throw new LoomError(405, `Method not allowed: ${req.method} ${req.path}`, { headers: { Allow: 'DELETE' } });
    const { agentId, topic } = sessionPath(req);
    const ref = parseTopic(topic);
    if (!ref) throw new LoomError(400, `Invalid topic: ${topic}`);
    res.json({ agent_id: agentId, topic: ref.topic, deleted: system.closeSession(agentId, ref.topic) });
  });
}
