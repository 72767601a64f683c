import { CapabilityService } from '../actors/capabilities.js';
import { invalidCapability, parseCapabilitySpec, type CapabilitySpec } from '../domain/capability.js';
import { FS_VERBS } from '../domain/fsPath.js';
import { CAPABILITY_MAX_TTL_MS } from '../domain/limits.js';
import type { AgentInput } from '../domain/agentInput.js';
import type { Feature } from '../features.js';
import { mountCapabilities } from '../http/routes/capabilities.js';
import { fsFastPath, mountFs } from '../http/routes/fs.js';
import { CapabilityStore } from '../stores/capabilityStore.js';
import { fsOperations } from '../effects/fsPlane.js';

/** The `capability` of a POST /agents body (spec §4.3), or undefined when not given. */
function pairingSpec(input: AgentInput): CapabilitySpec | undefined {
  const raw = input.body.capability;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidCapability('capability must be an object');
  return parseCapabilitySpec(raw as Record<string, unknown>);
}

/**
 * Capabilities and the file-system plane (issue 3): the capability store and actors, the
 * /capabilities and /fs routes, pairing through POST /agents, the DELETE /agents cascade, the
 * `agent` hub's capability rows and the /describe entries `fs` and `capability-tokens`.
 * An unreadable `<data>/capabilities.json` throws RegistryReadError here, which stops the daemon.
 */
export const capabilitiesFeature: Feature = async (ctx) => {
  const { system } = ctx;
  const store = await CapabilityStore.open(system.deps.info.dataDir, system.deps.clock.now());
  const service = new CapabilityService({ store, clock: system.deps.clock, factory: system.factory });
  service.hydrate();

  system.services.capabilities = { listForAgent: (agentId) => service.list(agentId) };
  system.registration.push({
    // spec §4.3 rule 2: a bad spec is refused before the agent is created or changed.
    validate: (input) => { pairingSpec(input); },
    apply: async (agent, input) => {
      const spec = pairingSpec(input);
      return spec ? { capability: await service.mint(agent.id, spec) } : {};
    },
  });
  system.deleteSteps.push(async (agentId) => ({ revoked_capabilities: await service.revokeAgent(agentId) }));
  system.shutdownHooks.push(() => service.stopAll());
  ctx.describeCapabilities['fs'] = { verbs: [...FS_VERBS] };
  ctx.describeCapabilities['capability-tokens'] = { max_ttl_ms: CAPABILITY_MAX_TTL_MS };

  const fsDeps = { verify: (secret: string) => service.verify(secret), home: (id: string) => system.deps.agents.get(id)?.home, ops: fsOperations };
  // The same allowed headers as createApp's CORS middleware (spec §4).
  ctx.fastPaths.push(fsFastPath(fsDeps, ctx.allowedOrigins, 'Content-Type, X-Agent-Id'));
  return [mountCapabilities(service), mountFs(fsDeps)];
};
