import type { AgentOutcome, DeleteCounts } from '../machines/agent.js';
import { ask } from './ask.js';
import type { DeleteOutcome } from './systemTypes.js';
import type { AgentActor } from './tree.js';

/**
 * DELETE /agents/{id} on a live agent actor (spec §4.3 rule 3): the actor goes `deleting`, which
 * counts and tells every topic (answer, end) and capability (revoked); the cascade's I/O runs as its exit;
 * the actor ends and leaves the tree with its remaining children. Resolves with the counts the
 * response reports; rejects with what the cascade threw.
 */
export async function deleteAgentActor(agent: AgentActor, agentId: string, at: number): Promise<DeleteOutcome> {
  const out = await ask<AgentActor, { ok: true; counts: DeleteCounts }>(agent, { type: 'agent.delete', at }, {
    ended: (end) => {
      const o = end.output as AgentOutcome;
      return o.ok ? o : o.error instanceof Error ? o.error : new Error(String(o.error));
    },
  });
  return { id: agentId, deleted: true, counts: out.counts };
}
