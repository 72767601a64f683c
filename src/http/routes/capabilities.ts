import type { Express, Request } from 'express';
import type { CapabilityService } from '../../services/capabilities.js';
import { parseCapabilitySpec } from '../../domain/capability.js';
import { LoomError } from '../../domain/errors.js';
import { isAgentId } from '../../domain/ids.js';
import type { AppContext } from '../context.js';
import { readJsonObject } from '../body.js';
import { agentHeader, route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

const mismatch = () => new LoomError(403, 'X-Agent-Id does not match agent_id');

/** The `agent_id` query parameter, read from the raw target (one value; empty = absent). */
function queryAgent(req: Request): string | undefined {
  const v = new URL(req.originalUrl, 'http://127.0.0.1').searchParams.get('agent_id');
  return v ? v : undefined;
}

/**
 * POST /capabilities, GET /capabilities[?agent_id=], DELETE /capabilities/{token_id}
 * (spec §4.2; checks, defaults and bodies of behaviour.md §9.5; §12 Q6 for X-Agent-Id).
 */
export function mountCapabilities(service: CapabilityService) {
  return (app: Express, ctx: AppContext): void => {
    route(app, '/capabilities', {
      POST: async (req, res) => {
        const body = await readJsonObject(req);
        const id = body.agent_id;
        if (id === undefined || id === null || id === '') throw new LoomError(400, 'agent_id required');
        if (!isAgentId(id)) throw new LoomError(400, `Invalid agent_id: ${typeof id === 'string' ? id : JSON.stringify(id)}`);
        if (!ctx.system.hasAgent(id)) throw new LoomError(404, `Unknown agent: ${id}`);
        const header = agentHeader(req);
        if (header !== undefined && header !== id) throw mismatch();
        const spec = parseCapabilitySpec(body);
        sendJson(req, res, 201, await service.mint(id, spec));
      },
      GET: (req, res) => {
        const header = agentHeader(req);
        const query = queryAgent(req);
        if (header !== undefined && query !== undefined && query !== header) throw mismatch();
        sendJson(req, res, 200, { capabilities: service.list(query ?? header) });
      },
    });
    route(app, '/capabilities/:token_id', {
      DELETE: async (req, res) => {
        const tokenId = String(req.params.token_id);
        const header = agentHeader(req);
        const owner = service.owner(tokenId);
        if (header !== undefined && owner !== undefined && owner !== header) throw mismatch();
        sendJson(req, res, 200, { token_id: tokenId, revoked: await service.revoke(tokenId) });
      },
    });
  };
}
