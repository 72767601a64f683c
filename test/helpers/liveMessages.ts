import type { InspectorMessage } from '../../src/services/inspection.js';
import type { LoomSystem } from '../../src/actors/system.js';

/**
 * Every live message of the tree (behaviour.md §13.3) as the inspector writes it, parsed, pushed to
 * `into` as it comes; returns the unsubscribe function.
 */
export function watchLiveMessages(system: LoomSystem, into: InspectorMessage[]): () => void {
  const live = system.inspection.liveFeed((m) => into.push(JSON.parse(live.json(m)) as InspectorMessage), { now: () => Date.now() });
  return live.unsubscribe;
}
