import type { Express, Request } from 'express';
import type { CapabilityRequests } from '../../services/capabilityRequests.js';
import { readJsonObject } from '../body.js';
import { agentHeader, route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

/** The `agent_id` query parameter, read from the raw target (one value; empty = absent). */
function queryAgent(req: Request): string | undefined {
  const v = new URL(req.originalUrl, 'http://127.0.0.1').searchParams.get('agent_id');
  return v ? v : undefined;
}

/**
 * POST /capabilities, GET /capabilities[?agent_id=], DELETE /capabilities/{token_id} (spec §4.2):
 * who may do what is decided by services/capabilityRequests.ts.
 */
export function mountCapabilities(requests: CapabilityRequests) {
  return (app: Express): void => {
    route(app, '/capabilities', {
      POST: async (req, res) => {
        const body = await readJsonObject(req);
        sendJson(req, res, 201, await requests.mint(body, agentHeader(req)));
      },
      GET: (req, res) => {
        sendJson(req, res, 200, { capabilities: requests.list(agentHeader(req), queryAgent(req)) });
      },
    });
    route(app, '/capabilities/:token_id', {
      DELETE: async (req, res) => {
        const tokenId = String(req.params.token_id);
        sendJson(req, res, 200, { token_id: tokenId, revoked: await requests.revoke(tokenId, agentHeader(req)) });
      },
    });
  };
}
