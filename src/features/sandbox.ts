import { effectiveSandbox } from '../domain/sandbox.js';
import type { Feature } from './types.js';

/**
 * The agent sandbox's part in the state inspector (behaviour.md §15, §13.2): each agent's mode. The
 * confinement itself happens where programs start (commands/sandbox.ts, effects/sandbox.ts).
 */
export const sandboxFeature: Feature = ({ directory, info }) => ({
  inspectAgent: (agentId) => ({ sandbox: effectiveSandbox(directory.profile(agentId)?.sandbox, info.sandbox ?? 'none') }),
});
