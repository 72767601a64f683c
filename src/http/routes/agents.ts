import type { Express } from 'express';
import { parseRegistration } from '../../domain/agentInput.js';
import type { AgentSummary } from '../../actors/system.js';
import type { AppContext } from '../context.js';
import { readJsonObject } from '../body.js';
import { queryFlag } from '../query.js';
import { route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

/**
 * The identity resource (spec §4.3; behaviour.md §9.5): GET/POST /agents, DELETE /agents/{id} — or
 * /users on the user wire (behaviour.md §11), the same routes with the wire's path, body rules and
 * field names. `?purge=1` deletes the agent's default home as well, `&force=1` a home the user chose
 * (behaviour.md §17); a refused purge deletes nothing.
 */
export function mountAgents(app: Express, ctx: AppContext): void {
  const { wire } = ctx;
  route(app, wire.resource, {
    GET: (req, res) => {
      const agents = ctx.system.listAgents() satisfies AgentSummary[];
      // The legacy user wire keeps its 0.1-era list shape exactly; the sandbox fields are agent-wire fields (behaviour.md §15).
      sendJson(req, res, 200, { [wire.listField]: wire.name === 'user' ? agents.map(({ sandbox: _mode, sandbox_source: _source, network: _network, ...rest }) => rest) : agents });
    },
    POST: async (req, res) => {
      const input = parseRegistration(wire, await readJsonObject(req));
      const r = await ctx.system.registerAgent(input);
      sendJson(req, res, 200, { [wire.idField]: r.id, home: r.home, created: r.created, ...r.extra });
    },
  });
  route(app, `${wire.resource}/:id`, {
    DELETE: async (req, res) => {
      const purge = queryFlag(req.query.purge, 'purge');
      const force = queryFlag(req.query.force, 'force');
      const r = await ctx.system.deleteAgent(String(req.params.id), purge ? { force } : undefined);
      const body: Record<string, unknown> = { [wire.idField]: r.id, deleted: r.deleted };
      for (const k of wire.deleteCounts) body[k] = r.counts[k] ?? 0;
      if (r.purgedHome !== undefined) body.purged_home = r.purgedHome;
      sendJson(req, res, 200, body);
    },
  });
}
