import { isAbsolute } from 'node:path';
import { LoomError } from './errors.js';
import { isAgentId } from './ids.js';
import { parseNetworkPolicy, type NetworkPolicy } from './networkPolicy.js';
import { parseSandboxMode, type SandboxMode } from './sandbox.js';
import type { WireDescription } from './wire.js';

/** Validated POST /agents input (spec §4.3; behaviour.md §9.5), or POST /users on the user wire (§11). */
export interface AgentInput {
  agentId: string;
  home?: string;
  allowedPaths?: string[];
  webhook: boolean;
  /** behaviour.md §15: omitted keeps the stored mode (a new agent gets the daemon default). */
  sandbox?: SandboxMode;
  /** behaviour.md §15.2: omitted keeps the stored policy. */
  network?: NetworkPolicy;
  /** The raw body, for registration extensions (capability pairing). */
  body: Record<string, unknown>;
}

const absent = (v: unknown) => v === undefined || v === null || v === '';

/** `home`, when given: an absolute path (behaviour.md §1.4). */
function parseHome(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string' || !isAbsolute(raw) || raw.includes('\0')) throw new LoomError(400, 'home must be an absolute path');
  return raw;
}

/** `allowed_paths` (also `allowedPaths`), when given: absolute paths only (behaviour.md §1.4). */
function parseAllowedPaths(body: Record<string, unknown>): string[] | undefined {
  const raw = body.allowed_paths ?? body.allowedPaths;
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw) || !raw.every((p) => typeof p === 'string' && isAbsolute(p) && !p.includes('\0'))) {
    throw new LoomError(400, 'allowed_paths must be an array of absolute paths');
  }
  return raw as string[];
}

/** `sandbox`, as a field to spread (absent when omitted, so the stored mode is kept). */
function sandboxField(body: Record<string, unknown>): { sandbox?: SandboxMode; network?: NetworkPolicy } {
  const mode = parseSandboxMode(body.sandbox);
  const network = parseNetworkPolicy(body.network);
  return { ...(mode === undefined ? {} : { sandbox: mode }), ...(network === undefined ? {} : { network }) };
}

/**
 * Validate a POST /agents body in the order of behaviour.md §9.5: agent_id present and valid,
 * home, allowed_paths, sandbox, network. Extensions (capability) validate next, all before any change.
 */
export function parseAgentInput(body: Record<string, unknown>): AgentInput {
  const id = body.agent_id;
  if (absent(id)) throw new LoomError(400, 'agent_id required');
  if (!isAgentId(id)) throw new LoomError(400, `Invalid agent_id: ${String(id)}`);
  return { agentId: id, home: parseHome(body.home), allowedPaths: parseAllowedPaths(body), webhook: body.webhook === true, ...sandboxField(body), body };
}

/**
 * Validate a POST /users body (behaviour.md §11): `id` (or `user_id`, the 0.1-era client's spelling)
 * required, then `home` required and absolute, then `allowed_paths`. There is no default home. When
 * both spellings are given they must agree: picking one silently could register the wrong user.
 */
export function parseUserInput(body: Record<string, unknown>): AgentInput {
  const field = !absent(body.id) ? 'id' : 'user_id';
  const id = body[field];
  if (absent(id)) throw new LoomError(400, 'id required');
  if (field === 'id' && !absent(body.user_id) && body.user_id !== id) throw new LoomError(400, 'id and user_id differ');
  if (!isAgentId(id)) throw new LoomError(400, `Invalid ${field}: ${String(id)}`);
  if (absent(body.home)) throw new LoomError(400, 'home required');
  return { agentId: id, home: parseHome(body.home), allowedPaths: parseAllowedPaths(body), webhook: false, ...sandboxField(body), body };
}

/** The registration body parser of a wire. */
export function parseRegistration(w: WireDescription, body: Record<string, unknown>): AgentInput {
  return w.name === 'user' ? parseUserInput(body) : parseAgentInput(body);
}
