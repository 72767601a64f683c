import type { Express } from 'express';
import { parseAgentInput } from '../../domain/agentInput.js';
import type { AppContext } from '../context.js';
import { readJsonObject } from '../body.js';
import { route } from '../route.js';

/** GET/POST /agents, DELETE /agents/{id} (spec §4.3; behaviour.md §9.5). */
export function mountAgents(app: Express, ctx: AppContext): void {
  route(app, '/agents', {
    GET: (_req, res) => {
      res.json({ agents: ctx.system.listAgents() });
    },
    POST: async (req, res) => {
      const input = parseAgentInput(await readJsonObject(req));
      res.json(await ctx.system.registerAgent(input));
    },
  });
  route(app, '/agents/:id', {
    DELETE: async (req, res) => {
      res.json(await ctx.system.deleteAgent(String(req.params.id)));
    },
  });
}
