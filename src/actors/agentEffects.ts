import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { confinementChanged, nextProfile } from '../domain/agentProfile.js';
import type { AgentStore, Clock } from '../domain/ports.js';
import type { SandboxMode } from '../domain/sandbox.js';
import { createHome } from '../effects/homePolicy.js';
import { realpathPrefix } from '../effects/workspace.js';
import type { DeleteCounts } from '../machines/agent.js';
import type { PersistInput, PersistOutput } from '../machines/agentRegistration.js';

/** What an agent's own I/O is built from (the stores and settings, not the facade). */
export interface AgentEffectDeps {
  clock: Clock;
  agents: AgentStore;
  /** The daemon's default sandbox mode (behaviour.md §15.6). */
  sandboxDefault: SandboxMode;
  /** The default home of an agent id (behaviour.md §1.4). */
  defaultHome(agentId: string): string;
  /** The agent's state folder (removed with the agent). */
  stateFolder(agentId: string): string;
  /** The features' steps of DELETE /agents/{id}, their counts added. */
  deleteSteps(agentId: string, counts: DeleteCounts): Promise<DeleteCounts>;
  /** What else forgets the agent once it is gone (the inspector's secret masks). */
  forget(agentId: string): void;
}

/**
 * The agent machine's `persist` (spec §4.3): the home folder, the roots as real paths
 * (behaviour.md §15.4), then the registry; the stored profile is what the actor then holds.
 */
export function persistRegistration(deps: AgentEffectDeps) {
  return async ({ existing, fields }: PersistInput): Promise<PersistOutput> => {
    const given = fields.home !== undefined ? resolve(fields.home) : existing?.home ?? deps.defaultHome(fields.agentId);
    createHome(given);
    const now = deps.clock.now();
    // behaviour.md §15.4: the roots are stored as real paths, so a link swapped in later is refused, never followed.
    const resolved = { home: fields.home !== undefined ? realpathPrefix(given) : given, allowedPaths: fields.allowedPaths?.map((p) => realpathPrefix(resolve(p))), now };
    const profile = nextProfile(existing ?? undefined, fields, resolved);
    await deps.agents.put(profile);
    return { profile, closeTopics: existing !== null && confinementChanged(existing, profile, deps.sandboxDefault), at: now };
  };
}

/** The agent machine's `cascade` (spec §4.3 rule 3): feature steps, state folder, registry entry. */
export function deletionCascade(deps: AgentEffectDeps) {
  return async (agentId: string, counts: DeleteCounts): Promise<DeleteCounts> => {
    const total = await deps.deleteSteps(agentId, counts);
    rmSync(deps.stateFolder(agentId), { recursive: true, force: true });
    await deps.agents.remove(agentId);
    deps.forget(agentId);
    return total;
  };
}

/** The state folder of an agent under the data directory. */
export const stateFolderOf = (dataDir: string, stateRoot: string) => (agentId: string): string => join(dataDir, stateRoot, agentId, 'state');
