import type { Express } from 'express';
import { parseRegistration } from '../../domain/agentInput.js';
import type { AgentSummary } from '../../actors/system.js';
import type { AppContext } from '../context.js';
import { purgeHome, purgeRefusal, queryFlag, type PurgeRequest } from '../../effects/homePurge.js';
import { readJsonObject } from '../body.js';
import { route } from '../route.js';

/**
 * The identity resource (spec §4.3; behaviour.md §9.5): GET/POST /agents, DELETE /agents/{id} — or
 * /users on the user wire (behaviour.md §11), the same routes with the wire's path, body rules and
 * field names. `?purge=1` deletes the agent's default home as well, `&force=1` a home the user chose
 * (behaviour.md §17); a refused purge deletes nothing.
 */
export function mountAgents(app: Express, ctx: AppContext): void {
  const { wire } = ctx;
  route(app, wire.resource, {
    GET: (_req, res) => {
      res.json({ [wire.listField]: ctx.system.listAgents() satisfies AgentSummary[] });
    },
    POST: async (req, res) => {
      const input = parseRegistration(wire, await readJsonObject(req));
      const r = await ctx.system.registerAgent(input);
      res.json({ [wire.idField]: r.id, home: r.home, created: r.created, ...r.extra });
    },
  });
  route(app, `${wire.resource}/:id`, {
    DELETE: async (req, res) => {
      const id = String(req.params.id);
      const purge = queryFlag(req.query.purge, 'purge');
      const force = queryFlag(req.query.force, 'force');
      const home = purge ? ctx.system.agentHome(id) : undefined;
      const target: PurgeRequest | null = home === undefined ? null : { agentId: id, home, defaultHome: wire.defaultHomes ? ctx.system.defaultHome(id) : null, force };
      const refusal = target && purgeRefusal(target);
      if (refusal) throw refusal;
      const r = await ctx.system.deleteAgent(id);
      const body: Record<string, unknown> = { [wire.idField]: r.id, deleted: r.deleted };
      for (const k of wire.deleteCounts) body[k] = r.counts[k] ?? 0;
      if (target && r.deleted) {
        purgeHome(target);
        body.purged_home = target.home;
      }
      res.json(body);
    },
  });
}
