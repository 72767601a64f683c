import { enqueueActions, setup, stopChild, type AnyActorRef } from 'xstate';
import { capabilityMachine, type CapabilityInput } from './capability.js';
import { childFailure, childrenOf, endedChild, type ChildEndEvent } from './children.js';

/**
 * A shelf of one agent's capability actors (architecture.md, "The actor tree"): not a spec table,
 * a container. An agent's live capabilities are spread over up to 64 shelves by the first character
 * of their token id, and each capability is a child of its shelf.
 *
 * Why: XState copies a parent's whole `children` object on every spawn and every stop (an object
 * spread, then `delete`, which also leaves the copy in slow dictionary mode). With thousands of live
 * tokens as direct children of the agent, each mint paid for all of them (2.8 ms per spawn at
 * 5,000 here) and a start-up with n stored tokens took O(n^2) (issue 12, defect 11). On shelves, a
 * spawn copies one shelf's ~n/64 children and the agent's few.
 *
 * The shelf has no system id (it is not in the inspector's registry); its capabilities keep theirs
 * (`cap:<token_id>`, behaviour.md §13.3).
 */

export type CapabilityShelfEvent =
  | { type: 'cap.open'; input: CapabilityInput }
  /** DELETE /agents: every capability on the shelf is revoked (spec §3 Capability, last row). */
  | { type: 'agent.delete'; at: number }
  | ChildEndEvent;

/** Shelves per agent: token ids are `cap_` + base64url, so the first character picks one of 64. */
export const SHELF_PREFIX = 'caps:';

/** The shelf (child id under the agent) that holds a token. */
export const shelfChildId = (tokenId: string): string => `${SHELF_PREFIX}${tokenId.charAt(4) || '_'}`;

/** Child id of a capability on its shelf. */
export const capChildId = (tokenId: string): string => `cap:${tokenId}`;
/** behaviour.md §13.3 system id of a capability actor. */
export const capSystemId = (tokenId: string): string => `cap:${tokenId}`;


/** The live capabilities on an agent's shelves, given the agent's children. */
export function liveOnShelves(agentChildren: Record<string, AnyActorRef | undefined>): number {
  let n = 0;
  for (const [id, shelf] of Object.entries(agentChildren)) if (shelf && id.startsWith(SHELF_PREFIX)) n += Object.keys(childrenOf(shelf)).length;
  return n;
}


export const capabilityShelfMachine = setup({
  types: {
    events: {} as CapabilityShelfEvent,
  },
  actors: {
    capability: capabilityMachine,
  },
  actions: {
    /** A capability failed (a bug below): said by src/actors; the capability is stopped. */
    reportChildError: (_args, _params: { childId: string; error: unknown }) => {},
  },
}).createMachine({
  id: 'capabilityShelf',
  on: {
    'cap.open': {
      actions: enqueueActions(({ enqueue, event, self }) => {
        const id = capChildId(event.input.tokenId);
        if (!Object.hasOwn(childrenOf(self), id)) enqueue.spawnChild('capability', { id, systemId: capSystemId(event.input.tokenId), input: event.input });
      }),
    },
    'agent.delete': {
      actions: enqueueActions(({ enqueue, event, self }) => {
        for (const child of Object.values(childrenOf(self))) enqueue.sendTo(child, event);
      }),
    },
    // A consumed, expired or revoked capability leaves the tree.
    'xstate.done.actor.*': { actions: stopChild(({ event }) => endedChild(event.type)) },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ enqueue, event }) => {
        enqueue({ type: 'reportChildError', params: childFailure(event) });
        enqueue.stopChild(endedChild(event.type));
      }),
    },
  },
});
