import { parseCapabilitySpec, type MintResponse, type PublicCapability } from '../domain/capability.js';
import { LoomError } from '../domain/errors.js';
import { isAgentId } from '../domain/ids.js';
import type { CapabilityService } from './capabilities.js';

const mismatch = () => new LoomError(403, 'X-Agent-Id does not match agent_id');

/**
 * Who may mint, list and revoke which capability (spec §4.2; the checks and bodies of behaviour.md
 * §9.5; §12 Q6 for X-Agent-Id): the requests of /capabilities, authorised, then handed to the
 * capability service. `caller` is the X-Agent-Id header, when one was sent.
 */
export class CapabilityRequests {
  constructor(private readonly service: CapabilityService, private readonly hasAgent: (agentId: string) => boolean) {}

  /** POST /capabilities with its JSON body. */
  mint(body: Record<string, unknown>, caller: string | undefined): Promise<MintResponse> {
    const id = body.agent_id;
    if (id === undefined || id === null || id === '') throw new LoomError(400, 'agent_id required');
    if (!isAgentId(id)) throw new LoomError(400, `Invalid agent_id: ${typeof id === 'string' ? id : JSON.stringify(id)}`);
    if (!this.hasAgent(id)) throw new LoomError(404, `Unknown agent: ${id}`);
    if (caller !== undefined && caller !== id) throw mismatch();
    return this.service.mint(id, parseCapabilitySpec(body));
  }

  /** GET /capabilities[?agent_id=]: the caller's, or the asked agent's when they agree. */
  list(caller: string | undefined, asked: string | undefined): PublicCapability[] {
    if (caller !== undefined && asked !== undefined && asked !== caller) throw mismatch();
    return this.service.list(asked ?? caller);
  }

  /** DELETE /capabilities/{token_id}: true when a live token was revoked. */
  revoke(tokenId: string, caller: string | undefined): Promise<boolean> {
    const owner = this.service.owner(tokenId);
    if (caller !== undefined && owner !== undefined && owner !== caller) throw mismatch();
    return this.service.revoke(tokenId);
  }
}
