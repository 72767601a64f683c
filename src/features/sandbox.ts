import { effectiveNetwork, effectiveSandbox } from '../domain/sandbox.js';
import type { Feature } from './types.js';

/**
 * The agent sandbox's part in the state inspector (behaviour.md §15, §15.5, §13.2): each agent's
 * mode, network policy and recent denials. The confinement itself happens where programs start
 * (commands/sandbox.ts, effects/sandbox.ts).
 */
export const sandboxFeature: Feature = ({ directory, info }) => ({
  inspectAgent: (agentId) => {
    const profile = directory.profile(agentId);
    return {
      sandbox: effectiveSandbox(profile?.sandbox, info.sandbox ?? 'none'),
      network: effectiveNetwork(profile?.network),
      denials: info.denials?.recent(agentId) ?? [],
    };
  },
});
