import type { AgentOutcome } from '../machines/agent.js';
import { liveOnShelves } from '../machines/capabilityShelf.js';
import type { DeleteOutcome } from './systemTypes.js';
import type { AgentActor } from './tree.js';

/**
 * DELETE /agents/{id} on a live agent actor (spec §4.3 rule 3): the actor goes `deleting`, which
 * tells every topic (answer, end) and capability (revoked); the cascade's I/O runs as its exit;
 * the actor ends and leaves the tree with its remaining children. Resolves with the counts the
 * response reports; throws what the cascade threw.
 */
export async function deleteAgentActor(agent: AgentActor, agentId: string, at: number): Promise<DeleteOutcome> {
  const snap = agent.getSnapshot();
  const counts = { revoked_capabilities: liveOnShelves(snap.children), disposed_sessions: snap.context.topics.size };
  const outcome = new Promise<AgentOutcome>((done, fail) => {
    agent.subscribe({ complete: () => done(agent.getSnapshot().output as AgentOutcome), error: fail });
  });
  agent.send({ type: 'agent.delete', at, counts });
  const out = await outcome;
  if (!out.ok) throw out.error;
  return { id: agentId, deleted: true, counts: out.counts };
}
