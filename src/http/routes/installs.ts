import type { Express, Request } from 'express';
import { LoomError } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import type { EventStreams } from '../../services/eventStreams.js';
import type { Installs } from '../../services/installs.js';
import { SseWriter } from '../sse.js';
import { queryText } from '../query.js';
import { headerRequired, unknownIdentity } from '../../domain/wire.js';
import { identityHeader, route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

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
 * request_id}]}`); `?request_id=` keeps the install started by that command. `GET /packages` (beyond spec): the agent's registry records,
 * sorted by name (`{agent_id, packages: [...]}`), for `loom packages --json`.
 */
export function installsRoute(streams: EventStreams, installs: Installs) {
  return (app: Express, ctx: AppContext): void => {
    installsJson(app, ctx, installs);
    installStream(app, ctx, streams);
  };
}

/** GET /installs and GET /packages: what they list comes masked from the install service (behaviour.md §13.4). */
function installsJson(app: Express, ctx: AppContext, installs: Installs): void {
  route(app, '/installs', {
    GET: (req, res) => {
      const agentId = agentOf(req, ctx);
      const want = queryText(req.query.request_id, 'request_id');
      sendJson(req, res, 200, { [ctx.wire.idField]: agentId, installs: installs.list(agentId, want) });
    },
  });
  route(app, '/packages', {
    GET: (req, res) => {
      const agentId = agentOf(req, ctx);
      sendJson(req, res, 200, { [ctx.wire.idField]: agentId, packages: installs.packages(agentId) });
    },
  });
}

/**
 * `GET /installs/stream` (beyond spec): the install progress of the agent as SSE, so a client shows
 * it as it happens instead of polling. Checks as GET /installs, then 429 past 16 open streams of
 * the agent; `ready` (`{agent_id}`) first, then one `install` event (an entry of GET /installs)
 * whenever a running install's progress or state changes, its end included, and `ping` every 15 s,
 * until the client leaves, the agent is deleted or the daemon stops. `?request_id=` keeps the
 * install of that command. No replay: a client opens the stream before it starts the install.
 */
function installStream(app: Express, ctx: AppContext, streams: EventStreams): void {
  route(app, '/installs/stream', {
    GET: (req, res) => {
      const agentId = agentOf(req, ctx);
      const want = queryText(req.query.request_id, 'request_id');
      if (streams.count(agentId) >= streams.maxPerAgent) throw new LoomError(429, `Too many install streams for ${ctx.wire.noun} ${agentId} (max ${streams.maxPerAgent})`);
      const sse = new SseWriter(res);
      sse.open();
      const handle = streams.open(agentId, {
        send: (name, data, requestId) => {
          if (sse.closed) return;
          if (name === 'install' && want !== undefined && requestId !== want) return;
          sse.event(name, data);
        },
        end: () => { if (!sse.closed) sse.end(); },
      }, { [ctx.wire.idField]: agentId });
      res.on('close', () => handle?.close());
      req.resume();
    },
  });
}
