import { CapabilityService } from '../services/capabilities.js';
import { CapabilityRequests } from '../services/capabilityRequests.js';
import { invalidCapability, parseCapabilitySpec, type CapabilitySpec } from '../domain/capability.js';
import { FS_VERBS } from '../domain/fsPath.js';
import { CAPABILITY_MAX_TTL_MS } from '../domain/limits.js';
import type { AgentInput } from '../domain/agentInput.js';
import { fsOperations } from '../effects/fsPlane.js';
import { mountCapabilities } from '../http/routes/capabilities.js';
import { fsRoute, mountFs } from '../http/routes/fs.js';
import { CapabilityStore } from '../stores/capabilityStore.js';
import type { Feature } from './types.js';

/** The `capability` of a POST /agents body (spec §4.3), or undefined when not given. */
function pairingSpec(input: AgentInput): CapabilitySpec | undefined {
  const raw = input.body.capability;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidCapability('capability must be an object');
  return parseCapabilitySpec(raw as Record<string, unknown>);
}

/**
 * Capabilities and the file-system plane: the capability store and actors (children of
 * their agents in the actor tree), the /capabilities and /fs routes, pairing through POST /agents,
 * the `agent` hub's capability rows and the /describe entries `fs` and `capability-tokens`.
 * An unreadable `<data>/capabilities.json` throws RegistryReadError here, which stops the daemon.
 */
export const capabilitiesFeature: Feature = async ({ directory, info, clock }) => {
  const store = await CapabilityStore.open(info.dataDir, clock.now());
  const service = new CapabilityService({ store, clock, directory });
  const fsDeps = { verify: (secret: string) => service.verify(secret), home: (id: string) => directory.profile(id)?.home, ops: fsOperations };
  return {
    services: { capabilities: { listForAgent: (agentId) => service.list(agentId) } },
    actors: { archiveCapability: service.archiveEnd },
    // The stored live tokens become actors once the tree runs.
    onStart: () => service.hydrate(),
    describe: { fs: { verbs: [...FS_VERBS] }, 'capability-tokens': { max_ttl_ms: CAPABILITY_MAX_TTL_MS } },
    onRegister: {
      // spec §4.3 rule 2: a bad spec is refused before the agent is created or changed.
      validate: (input) => { pairingSpec(input); },
      apply: async (agent, input) => {
        const spec = pairingSpec(input);
        return spec ? { capability: await service.mint(agent.id, spec) } : {};
      },
    },
    // The inspector's rows (behaviour.md §13.2): ids, scope, state and expiry; never a secret or its hash.
    inspectAgent: (agentId) => ({
      capabilities: service.list(agentId).map((c) => ({
        token_id: c.token_id, path_prefix: c.path_prefix, verbs: c.verbs, state: c.state, single_use: c.single_use, expires_at: c.expires_at,
      })),
    }),
    // The agent's actor has revoked its live capabilities; their records reach the disk here.
    onDelete: () => service.settled(),
    fastRoutes: [fsRoute(fsDeps)],
    routes: [mountCapabilities(new CapabilityRequests(service, (id) => directory.has(id))), mountFs(fsDeps)],
  };
};
