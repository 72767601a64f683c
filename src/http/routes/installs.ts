import type { Express } from 'express';
import { LoomError } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import { agentHeader, route } from '../route.js';

/**
 * `GET /installs` (beyond spec): the running installs of the agent named by `X-Agent-Id`, read from
 * its `install:<install_id>` actors, with the progress fields of behaviour.md §13.2
 * (`{agent_id, installs: [{install_id, name, source, state, files_done, files_total, bytes,
 * request_id}]}`); `?request_id=` keeps the install started by that command. The CLI's progress
 * bar polls it while `/install` runs.
 */
export function installsRoute(app: Express, ctx: AppContext): void {
  route(app, '/installs', {
    GET: (req, res) => {
      const agentId = agentHeader(req);
      if (!agentId) throw new LoomError(400, 'X-Agent-Id header required');
      if (!ctx.system.hasAgent(agentId)) throw new LoomError(401, `Unknown agent: ${agentId}`);
      const want = typeof req.query.request_id === 'string' ? req.query.request_id : undefined;
      const installs = ctx.system.installs(agentId).filter((i) => want === undefined || i.request_id === want);
      res.json({ agent_id: agentId, installs });
    },
  });
}
