import { isAbsolute } from 'node:path';
import { LoomError } from './errors.js';
import { isAgentId } from './ids.js';

/** Validated POST /agents input (spec §4.3; behaviour.md §9.5). */
export interface AgentInput {
  agentId: string;
  home?: string;
  allowedPaths?: string[];
  webhook: boolean;
  /** The raw body, for registration extensions (capability pairing). */
  body: Record<string, unknown>;
}

/**
 * Validate a POST /agents body in the order of behaviour.md §9.5: agent_id present and valid,
 * home, allowed_paths. Extensions (capability) validate next, all before any change.
 */
export function parseAgentInput(body: Record<string, unknown>): AgentInput {
  const id = body.agent_id;
  if (id === undefined || id === null || id === '') throw new LoomError(400, 'agent_id required');
  if (!isAgentId(id)) throw new LoomError(400, `Invalid agent_id: ${String(id)}`);
  let home: string | undefined;
  if (body.home !== undefined && body.home !== null) {
    if (typeof body.home !== 'string' || !isAbsolute(body.home) || body.home.includes('\0')) throw new LoomError(400, 'home must be an absolute path');
    home = body.home;
  }
  const rawPaths = body.allowed_paths ?? body.allowedPaths;
  let allowedPaths: string[] | undefined;
  if (rawPaths !== undefined && rawPaths !== null) {
    if (!Array.isArray(rawPaths) || !rawPaths.every((p) => typeof p === 'string' && isAbsolute(p) && !p.includes('\0'))) {
      throw new LoomError(400, 'allowed_paths must be an array of absolute paths');
    }
    allowedPaths = rawPaths as string[];
  }
  return { agentId: id, home, allowedPaths, webhook: body.webhook === true, body };
}
