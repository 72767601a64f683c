import type { AgentInput } from './agentInput.js';
import type { AgentProfile } from './ports.js';
import { effectiveSandbox, type SandboxMode } from './sandbox.js';

/**
 * The profile a registration leaves (spec §4.3: only provided fields change, createdAt kept). The
 * home and allowed paths arrive resolved to real paths (behaviour.md §15.4); `sandbox` and
 * `network` are stored only when chosen, now or before (§15.6), so an agent that never chose
 * follows the daemon default.
 */
export function nextProfile(existing: AgentProfile | undefined, input: Pick<AgentInput, 'agentId' | 'sandbox' | 'network'>, resolved: { home: string; allowedPaths: string[] | undefined; now: number }): AgentProfile {
  const sandbox = input.sandbox ?? existing?.sandbox;
  const network = input.network ?? existing?.network;
  const { sandbox: _s, network: _n, ...kept } = existing ?? ({} as Partial<AgentProfile>);
  return {
    ...kept,
    id: input.agentId,
    home: resolved.home,
    allowedPaths: resolved.allowedPaths ?? existing?.allowedPaths ?? [],
    createdAt: existing?.createdAt ?? new Date(resolved.now).toISOString(),
    ...(sandbox ? { sandbox } : {}),
    ...(network ? { network } : {}),
  };
}

/**
 * True when a re-registration changes what the agent's programs start with (behaviour.md §9.5,
 * §15): its home, its effective sandbox mode or its network policy. Its sessions are then closed; a
 * live shell keeps the rules it started with.
 */
export function confinementChanged(before: AgentProfile, after: AgentProfile, daemonDefault: SandboxMode): boolean {
  return before.home !== after.home
    || effectiveSandbox(before.sandbox, daemonDefault) !== effectiveSandbox(after.sandbox, daemonDefault)
    || JSON.stringify(before.network) !== JSON.stringify(after.network);
}
