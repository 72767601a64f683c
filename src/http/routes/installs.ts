import type { Express, Request } from 'express';
import { LoomError } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import { headerRequired, unknownIdentity } from '../../domain/wire.js';
import { identityHeader, route } from '../route.js';

/** The agent named by `X-Agent-Id` (`X-User-Id` on the user wire): 400 without it, 401 when it is not registered (as /exec). */
function agentOf(req: Request, ctx: AppContext): string {
  const agentId = identityHeader(req, ctx.wire);
  if (!agentId) throw new LoomError(400, headerRequired(ctx.wire));
  if (!ctx.system.hasAgent(agentId)) throw new LoomError(401, unknownIdentity(ctx.wire, agentId));
  return agentId;
}

/**
 * `GET /installs` (beyond spec): the running installs of the agent named by `X-Agent-Id`, read from
 * its `install:<install_id>` actors, with the progress fields of behaviour.md §13.2
 * (`{agent_id, installs: [{install_id, name, source, state, files_done, files_total, bytes,
 * request_id}]}`); `?request_id=` keeps the install started by that command. The CLI's progress
 * bar polls it while `/install` runs. `GET /packages` (beyond spec): the agent's registry records,
 * sorted by name (`{agent_id, packages: [...]}`), for `loom packages --json`.
 */
export function installsRoute(app: Express, ctx: AppContext): void {
  route(app, '/installs', {
    GET: (req, res) => {
      const agentId = agentOf(req, ctx);
      const want = typeof req.query.request_id === 'string' ? req.query.request_id : undefined;
      const installs = ctx.system.installs(agentId).filter((i) => want === undefined || i.request_id === want);
      res.json({ [ctx.wire.idField]: agentId, installs });
    },
  });
  route(app, '/packages', {
    GET: (req, res) => {
      const agentId = agentOf(req, ctx);
      const packages = ctx.system.packages(agentId).map(({ installId: _id, ...rest }) => rest);
      res.json({ [ctx.wire.idField]: agentId, packages });
    },
  });
}
